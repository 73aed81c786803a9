// ONNX Runtime (CPU) peer for opscope's benchmarks: runs a model on .npy inputs, times it the way
// `opscope-cli run` does (one warm-up, then N timed runs), optionally saves outputs as .npy and the
// optimized model ORT produced.
//   node run.js MODEL [--input NAME=FILE.npy]... [--threads N] [--iterations N]
//                     [--save-outputs DIR] [--optimized-model FILE] [--level disabled|basic|extended|all]
//                     [--profile PREFIX]  (ORT's own per-node profile, PREFIX_<date>.json, for per-node comparisons)
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const DTYPES = { '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array], '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array], '|b1': ['bool', Uint8Array], '<f2': ['float16', Uint16Array] };

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const offset = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', offset, offset + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = (/'shape':\s*\(([^)]*)\)/.exec(header)[1].match(/\d+/g) || []).map(Number);
  const [type, Ctor] = DTYPES[descr];
  const bytes = buf.subarray(offset + headerLen);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new ort.Tensor(type, new Ctor(copy.buffer), shape);
}

function writeNpy(file, tensor) {
  const descr = Object.keys(DTYPES).find((k) => DTYPES[k][0] === tensor.type);
  const shape = tensor.dims.length === 1 ? `${tensor.dims[0]},` : tensor.dims.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape}), }`;
  header += ' '.repeat((64 - ((10 + header.length + 1) % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), data]));
}

async function main() {
  const args = process.argv.slice(2);
  const opts = { inputs: {}, threads: 1, iterations: 10, level: 'all' };
  for (let i = 1; i < args.length; i++) {
    const a = args[i];
    if (a === '--input') { const [k, v] = args[++i].split('='); opts.inputs[k] = v; }
    else if (a === '--threads') opts.threads = Number(args[++i]);
    else if (a === '--iterations') opts.iterations = Number(args[++i]);
    else if (a === '--save-outputs') opts.save = args[++i];
    else if (a === '--optimized-model') opts.optimized = args[++i];
    else if (a === '--level') opts.level = args[++i];
    else if (a === '--profile') opts.profile = args[++i];
    else throw new Error(`unknown argument ${a}`);
  }
  const so = { intraOpNumThreads: opts.threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: opts.level };
  if (opts.optimized) so.optimizedModelFilePath = opts.optimized;
  if (opts.profile) { so.enableProfiling = true; so.profileFilePrefix = opts.profile; }
  const session = await ort.InferenceSession.create(args[0], so);
  const feeds = {};
  for (const [name, file] of Object.entries(opts.inputs)) feeds[name] = readNpy(file);
  let outputs = await session.run(feeds);
  const ms = [];
  for (let i = 0; i < opts.iterations; i++) {
    const t0 = process.hrtime.bigint();
    outputs = await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const median = ms.length ? (ms[(ms.length - 1) >> 1] + ms[ms.length >> 1]) / 2 : 0;
  if (opts.profile) session.endProfiling();
  if (opts.save) {
    fs.mkdirSync(opts.save, { recursive: true });
    for (const [name, t] of Object.entries(outputs)) writeNpy(path.join(opts.save, name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy'), t);
  }
  console.log(JSON.stringify({ latency_ms: { median, min: ms[0] || 0, max: ms[ms.length - 1] || 0 } }));
}

main().catch((e) => { console.error(`ort: error: ${e.message}`); process.exit(1); });

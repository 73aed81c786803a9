#include "rankprofile.h"

#include "batches.h"
#include "mpitransfers.h"
#include "rankplan.h"
#include "rankplanning.h"
#include "rankruns.h"
#include "tracewire.h"
#include "onnx/embeddedweights.h"
#include "runtime/backend.h"
#include "runtime/randominputs.h"
#include "runtime/stagerunner.h"
#include "schedule/memorycounters.h"
#include "schedule/partition.h"
#include "schedule/pipeline.h"
#include "util/systemmemory.h"

#include <algorithm>
#include <map>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

namespace opscope::dist {

using nlohmann::json;
using schedule::ProfileRun;
using schedule::Strategy;

namespace {

std::string deviceName(int rank, int local) { return "rank" + std::to_string(rank) + ":cpu:" + std::to_string(local); }

struct Gathered
{
    std::vector<trace::Trace> traces; // by rank: the median run
    std::vector<double> zero;         // by rank: its clock at that run's start
};

} // namespace

Expected<RankProfile> profileAcrossRanks(MpiContext &mpi, const Model &model, const RankProfileOptions &options)
{
    RankProfile result;
    result.ranks = mpi.size();
    const int me = mpi.rank();
    const int perRank = std::max(1, options.devicesPerRank);
    const int threads = std::max(1, options.threadsPerDevice);
    const int iterations = std::max(1, options.iterations);
    const auto say = [&](const std::string &s) {
        if (me == 0 && options.progress)
            options.progress(s);
    };

    // Rank 0 alone runs serial, plans and runs --in-process: the others wait for it as long as
    // that takes; rank 0 waits for them at most the timeout.
    const auto forever = std::chrono::duration<double>(0.0);
    const auto rankZeroAlone = [&] { return me == 0 ? mpi.timeout() : forever; };

    // 1. One graph on every rank: the plan names nodes by slot.
    {
        const std::string mine = graphSignature(model.graph);
        std::string root = mine;
        OPSCOPE_TRY(mpi.broadcast(root));
        OPSCOPE_TRY(mpi.agree(root == mine ? Status::ok()
                                           : Status::invalid("its optimized graph differs from rank 0's: give "
                                                             "every rank the same model file and --optimize level")));
    }
    // 2. The link between ranks and their clocks.
    Expected<schedule::LinkModel> link = measureLink(mpi);
    if (!link)
        return link.status();
    result.link = *link;
    Expected<std::vector<ClockOffset>> clocks = measureClockOffsets(mpi);
    if (!clocks)
        return clocks.status();
    result.clockStart = *clocks;
    // Ranks on one host talk through shared memory in about a µs; far more means they were
    // descheduled while measuring, and the plan's link and the clock offsets are doubtful.
    if (me == 0 && mpi.size() > 1 && result.link.latencySeconds > 100e-6)
        result.notes.push_back("the link between ranks measured " + std::to_string(int(result.link.latencySeconds * 1e6)) +
                               " µs latency: a busy machine (ranks descheduled while measuring) makes the plans and "
                               "the merged trace's clock offsets doubtful");

    // What each rank may hold: --memory-per-rank, or its host's (or cgroup's) free memory now, the
    // model loaded. Gathered once: the placement and the check of every plan use it.
    {
        const std::uint64_t mine = options.memoryPerRank ? options.memoryPerRank : availableMemoryBytes();
        Expected<std::vector<std::vector<std::byte>>> all = mpi.gather(packJson(json(mine)));
        if (!all)
            return all.status();
        if (me == 0)
            for (const auto &b : *all)
                result.available.push_back(unpackJson(b).get<std::uint64_t>());
    }

    // 3. The inputs: rank 0's, on every rank.
    Feeds feeds;
    std::unique_ptr<InferenceSession> serialSession;
    {
        Status st;
        json packed = json::array();
        if (me == 0) {
            SessionOptions so;
            so.threads = threads;
            Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(model, so);
            if (s) {
                serialSession = std::move(*s);
                RandomInputOptions ro;
                ro.seed = options.seed;
                ro.dims = options.dims;
                Expected<Feeds> f = randomFeeds(*serialSession, options.given, ro);
                if (f) {
                    feeds = std::move(*f);
                    for (const auto &[name, t] : feeds) {
                        if (t.dtype() == DataType::String) {
                            st = Status::unsupported("input '" + name + "' is a string tensor: those cannot be "
                                                     "sent to other ranks");
                            break;
                        }
                        packed.push_back({name, tensorToJson(t)});
                    }
                } else {
                    st = f.status();
                }
            } else {
                st = s.status();
            }
        }
        OPSCOPE_TRY(mpi.agree(st));
        std::vector<std::byte> bytes = me == 0 ? packJson(packed) : std::vector<std::byte>{};
        OPSCOPE_TRY(mpi.broadcast(bytes));
        if (me != 0)
            for (const json &e : unpackJson(bytes)) {
                Expected<RuntimeTensor> t = tensorFromJson(e[1]);
                if (!t)
                    return t.status();
                feeds.emplace_back(e[0].get<std::string>(), std::move(*t));
            }
    }

    // The micro-batches of a pipeline, split alike on every rank from the same feeds.
    std::vector<Feeds> microFeeds;
    if (options.microbatches > 1 &&
        std::find(options.strategies.begin(), options.strategies.end(), Strategy::Pipeline) != options.strategies.end()) {
        Status st;
        std::unique_ptr<InferenceSession> own; // the declared inputs: rank 0 has its serial session
        const InferenceSession *session = serialSession.get();
        if (!session) {
            Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(model);
            if (s)
                own = std::move(*s), session = own.get();
            else
                st = s.status();
        }
        if (session) {
            if (Expected<std::vector<Feeds>> split = splitFeeds(feeds, options.microbatches, *session); split)
                microFeeds = std::move(*split);
            else
                st = split.status();
        }
        OPSCOPE_TRY(mpi.agree(st));
    }

    // 4. Serial on rank 0: the reference outputs, the op times plans are made with, and the
    // serial row when asked for — where the whole model fits rank 0. A model that outgrew one
    // rank (its weights and the serial run's tensors over rank 0's budget, from the inferred
    // shapes) goes without: the plans take the cost model's op times, each placement is sized
    // from its shapes instead of a run, and the spread schedules' outputs are checked against
    // the first one's.
    std::vector<RuntimeTensor> reference;
    std::string referenceName = "serial";
    std::unordered_map<std::string, double> opSeconds;
    double serialMs = 0.0;
    bool wholeFitsRankZero = true;
    if (me == 0 && !result.available.empty() && result.available[0] > 0) {
        const bool limitGiven = options.memoryPerRank != 0;
        std::uint64_t weights = 0; // what rank 0 would hold beyond what it has loaded already
        for (ValueId v : model.graph.initializers())
            if (const Tensor &t = *model.graph.value(v).initializer; t.isMapped() || limitGiven)
                weights += t.byteSize();
        if (const std::optional<std::uint64_t> peak = serialSession->estimatePeakBytes(feeds);
            peak && *peak + weights > result.available[0]) {
            wholeFitsRankZero = false;
            const std::string why = "the whole model needs " + bytesText(*peak + weights) + " (tensors live at its peak " +
                                    bytesText(*peak) + ", weights " + bytesText(weights) + ") but rank 0 has " +
                                    bytesText(result.available[0]) +
                                    (limitGiven ? " (--memory-per-rank)" : " free");
            if (std::find(options.strategies.begin(), options.strategies.end(), Strategy::Serial) !=
                options.strategies.end())
                result.refused.push_back("serial does not fit rank 0: " + why);
            result.notes.push_back("no serial run on rank 0: " + why +
                                   "; the plans use the cost model's op times, each rank's share is sized from "
                                   "the inferred shapes, and the schedules' outputs are checked against the first's");
            if (options.inProcess)
                result.notes.push_back("--in-process skipped: the plans' whole model does not fit rank 0");
            // What sets the transfer timeout below (50× serial's time): the cost model's serial
            // makespan stands in for the run — such a model's stages may well take past 30 s.
            if (Expected<schedule::Schedule> predicted = schedule::makeSchedule(
                    model.graph, Strategy::Serial, schedule::calibratedCpuModel(1, threads));
                predicted)
                serialMs = predicted->predictedMakespan * 1e3;
        }
    }
    {
        int fits = wholeFitsRankZero ? 1 : 0; // every rank takes the same path below (--in-process)
        MPI_Bcast(&fits, 1, MPI_INT, 0, mpi.comm());
        wholeFitsRankZero = fits != 0;
    }
    {
        Status st;
        if (me == 0 && wholeFitsRankZero) {
            say("serial on rank 0");
            schedule::ProfileOptions po;
            po.strategies = {Strategy::Serial};
            po.devices = 1;
            po.threadsPerDevice = threads;
            // Op times and reference outputs need few runs; the serial row, if asked for, all.
            const bool serialRow = std::find(options.strategies.begin(), options.strategies.end(),
                                             Strategy::Serial) != options.strategies.end();
            po.iterations = serialRow ? iterations : std::min(iterations, 3);
            po.given = feeds;
            po.allCoresSerial = false;
            Expected<std::vector<ProfileRun>> serial = schedule::profileModel(model, po);
            Expected<std::vector<RuntimeTensor>> out = serial ? serialSession->run(feeds)
                                                              : Expected<std::vector<RuntimeTensor>>(serial.status());
            if (serial && out) {
                reference = std::move(*out);
                ProfileRun &r = serial->front();
                opSeconds = r.opSeconds;
                serialMs = r.makespanMs;
                // Named like the devices of the spread runs, so the compare view lines them up.
                for (trace::Lane &l : r.trace.lanes)
                    l.device = "rank0:" + l.device; // its host too, as the spread runs name theirs
                for (trace::Counter &c : r.trace.counters)
                    c.device = "rank0:" + c.device;
                for (auto &[d, u] : r.utilization)
                    d = "rank0:" + d;
                std::map<std::string, int> queues; // renamed alike, or the table calls rank0:cpu:0 unused
                for (const auto &[d, q] : r.queues)
                    queues["rank0:" + d] = q;
                r.queues = std::move(queues);
                for (auto &[d, b] : r.arenaBytes)
                    d = "rank0:" + d;
                if (std::find(options.strategies.begin(), options.strategies.end(), Strategy::Serial) !=
                    options.strategies.end()) {
                    result.runs.push_back(std::move(r));
                    result.info.push_back({});
                }
            } else {
                st = serial ? out.status() : serial.status();
            }
        }
        OPSCOPE_TRY(mpi.agree(st, rankZeroAlone()));
        double timeout = options.transferTimeoutSeconds > 0 ? options.transferTimeoutSeconds
                                                            : std::max(30.0, 50.0 * serialMs * 1e-3);
        MPI_Bcast(&timeout, 1, MPI_DOUBLE, 0, mpi.comm());
        result.transferTimeoutSeconds = timeout;
        mpi.setTimeout(std::chrono::duration<double>(timeout));
    }

    // 5. Each schedule that spreads over the devices, across the ranks.
    const int devices = mpi.size() * perRank;
    std::vector<int> rankOfDevice(static_cast<std::size_t>(devices), 0);
    for (int d = 0; d < devices; ++d)
        rankOfDevice[std::size_t(d)] = d / perRank;
    struct Spread
    {
        std::size_t run;
        Gathered gathered;
        std::vector<CrossRankEdge> edges;
        std::vector<std::string> labels;
    };
    std::vector<Spread> spreads;
    for (Strategy strategy : options.strategies) {
        if (strategy == Strategy::Serial)
            continue;
        if (strategy == Strategy::Parallel)
            return Status::invalid("parallel runs the workers of one device: across ranks use greedy, "
                                   "round-robin or pipeline (serial and parallel run in one process)");
        const std::string name =
            schedule::strategyName(strategy) +
            (strategy == Strategy::Pipeline && options.microbatches > 1
                 ? ", " + std::to_string(options.microbatches) + " micro-batches"
                 : std::string());
        say(name + ": planning over " + std::to_string(devices) + " devices of " + std::to_string(mpi.size()) +
            " ranks");
        // Rank 0 plans.
        Status st;
        std::vector<std::byte> planBytes;
        if (me == 0) {
            RankPlanRequest request;
            request.strategy = strategy;
            request.name = name;
            request.cost = schedule::calibratedCpuModel(devices, threads);
            for (int d = 0; d < devices; ++d)
                request.cost.devices[std::size_t(d)].name = deviceName(d / perRank, d % perRank);
            request.cost.processOf = rankOfDevice;
            request.cost.remoteLink = result.link;
            request.cost.measuredSeconds = opSeconds;
            request.rankOfDevice = rankOfDevice;
            request.ranks = mpi.size();
            request.threads = threads;
            request.microbatches = options.microbatches;
            request.available = result.available;
            request.limitGiven = options.memoryPerRank != 0;
            request.sizeByRunning = wholeFitsRankZero;
            capDevicesByRank(request, model);
            const bool pipelined = strategy == Strategy::Pipeline && options.microbatches > 1;
            Expected<RankPlanOutcome> planned =
                planAcrossRanks(model, std::move(request), pipelined ? microFeeds.front() : feeds);
            if (planned) {
                if (planned->placements > 1 && !planned->encoded.contains("refused"))
                    result.notes.push_back(name + " was placed " + std::to_string(planned->placements) +
                                           " times to fit each rank's memory: its first placement did not");
                if (planned->unsized > 0)
                    result.notes.push_back(name + ": " + std::to_string(planned->unsized) +
                                           " tensors of data-dependent size are not in the ranks' predicted "
                                           "shares (sized from shapes, without a run)");
                planBytes = packJson(planned->encoded);
            } else {
                st = planned.status();
            }
        }
        OPSCOPE_TRY(mpi.agree(st, rankZeroAlone()));
        OPSCOPE_TRY(mpi.broadcast(planBytes));
        // Every rank: the same partition from the same placement, its own queues of the plan.
        schedule::Placement place;
        ExecutionPlan global;
        double predicted = 0.0;
        const json planJson = unpackJson(planBytes);
        if (planJson.contains("refused")) {
            result.refused.push_back(planJson["refused"].get<std::string>());
            continue;
        }
        decodePlan(planJson, place, global, predicted);
        std::vector<RankMemory> planned;
        for (const json &m : planJson.at("memory"))
            planned.push_back({m[0].get<std::uint64_t>(), m[1].get<std::uint64_t>(), m[2].get<std::uint64_t>(),
                               m[3].get<std::uint64_t>(), m[4].get<std::uint64_t>()});
        Expected<schedule::Partition> part = schedule::partitionForDevices(model, place);
        if (part && part->model.graph.nodeSlots() != planJson.at("slots").get<std::size_t>())
            part = Status::internal("its partition of the " + name + " placement differs from rank 0's");
        OPSCOPE_TRY(mpi.agree(part ? Status::ok() : part.status()));
        const Graph &graph = part->model.graph;
        std::vector<CrossRankEdge> edges = crossRankEdges(graph, part->deviceOf, rankOfDevice);
        MPI_Comm comm = MPI_COMM_NULL;
        MPI_Comm_dup(mpi.comm(), &comm); // this plan's transfers alone
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        struct FreeComm
        {
            MPI_Comm &c;
            ~FreeComm() { MPI_Comm_free(&c); }
        } freeComm{comm};
        auto transport = std::make_unique<MpiTransfers>(comm, me, edges,
                                                        std::chrono::duration<double>(result.transferTimeoutSeconds));
        Expected<ExecutionPlan> local = localPlan(global, rankOfDevice, me, graph);
        OPSCOPE_TRY(mpi.agree(local ? Status::ok() : local.status()));
        SessionOptions so;
        so.threads = threads;
        // The session's own check estimates the whole graph, every rank's share: rank 0 checked
        // this rank's share against what it has above.
        so.checkMemory = false;
        Expected<std::unique_ptr<InferenceSession>> session = InferenceSession::create(part->model, so);
        OPSCOPE_TRY(mpi.agree(session ? Status::ok() : session.status()));
        std::vector<std::unique_ptr<Backend>> owned;
        ExecOptions exec;
        exec.threads = threads;
        for (int k = 0; k < perRank; ++k) {
            owned.push_back(std::make_unique<CpuBackend>(me * perRank + k, threads));
            exec.backends.push_back(owned.back().get());
        }
        exec.remote = transport.get();
        trace::Recorder recorder(local->devices);
        exec.onStep = [&recorder](const StepEvent &e) { recorder.onStep(e); };
        // A run every rank starts together. A failure here may leave other ranks waiting on this
        // one's transfers: it ends the job, naming this rank.
        // A pipeline runs its micro-batches one after another on each rank: a rank starts the next
        // as soon as it has sent the last one's tensors, so the stages overlap (fill, steady
        // state, drain) with nothing but MPI's per-(source, tag) order pairing the micro-batches.
        const bool pipelined = strategy == Strategy::Pipeline && options.microbatches > 1;
        const std::vector<Feeds> oneBatch{feeds};
        const std::vector<Feeds> &batches = pipelined ? microFeeds : oneBatch;
        std::vector<std::string> labels;
        for (std::size_t m = 0; m < batches.size(); ++m)
            labels.push_back(pipelined ? " #" + std::to_string(m) : std::string());
        const auto runOnce = [&]() -> std::vector<std::vector<RuntimeTensor>> {
            // A rank that never arrives (stopped, stuck in a kernel) must not hang the others.
            if (Status b = mpi.barrier(std::chrono::duration<double>(result.transferTimeoutSeconds), Waiting::Spin); !b)
                mpi.abort(name + ": not every rank reached the start of a run (a rank is stuck or stopped): " +
                          b.message());
            recorder.begin();
            std::vector<std::vector<RuntimeTensor>> outs;
            // A pipeline: the rank's devices are stages too, each in a thread of its own, so a rank
            // with K devices overlaps its micro-batches as the ranks do (MPI between ranks).
            if (pipelined) {
                PipelineOptions po;
                po.threads = threads;
                po.backends = exec.backends;
                po.outer = transport.get();
                po.onStep = [&recorder, &labels](const StepEvent &e, int m) {
                    recorder.onStep(e, labels[std::size_t(m)]);
                };
                Expected<std::vector<std::vector<RuntimeTensor>>> piped =
                    runPipelined(**session, *local, batches, po);
                if (!piped)
                    mpi.abort(name + ": " + microbatchRunFailed(piped.status(), int(batches.size())).message());
                outs = std::move(*piped);
            } else {
                Expected<std::vector<RuntimeTensor>> out = (*session)->run(feeds, &*local, &exec);
                if (!out)
                    mpi.abort(name + ": " + out.status().message());
                outs.push_back(std::move(*out));
            }
            if (Status done = transport->finishRun(); !done)
                mpi.abort(name + ": " + done.message());
            return outs;
        };
        // Rank 0's serial run and its sizing runs read every weight: from here each rank pages in
        // only what its own nodes read.
        dropResidentWeights(model.graph);
        say(name + ": warm-up across " + std::to_string(mpi.size()) + " ranks");
        std::vector<std::vector<RuntimeTensor>> perBatch = runOnce();
        // The outputs, gathered on rank 0 (micro-batches joined along dim 0), against serial's.
        {
            Expected<std::vector<std::vector<std::byte>>> all = mpi.gather(packOutputs(perBatch, me));
            if (!all)
                return all.status();
            Status same;
            if (me == 0) {
                for (std::size_t r = 1; r < all->size(); ++r)
                    for (const json &e : unpackJson((*all)[r])) {
                        Expected<RuntimeTensor> t = tensorFromJson(e[2]);
                        if (!t)
                            return t.status();
                        perBatch.at(e[1].get<std::size_t>()).at(e[0].get<std::size_t>()) = std::move(*t);
                    }
                // Micro-batches of a model that mixes a batch's samples compute something else:
                // the model's doing (exit 1), not a bug of the plan (exit 2).
                Expected<std::vector<RuntimeTensor>> joined = joinMicrobatches(perBatch);
                if (!joined)
                    same = joined.status().withContext(name + " across ranks");
                for (std::size_t i = 0; joined && i < reference.size() && same.isOk(); ++i)
                    if (Status d = schedule::sameWithinScale((*joined)[i], reference[i]); !d) {
                        const std::string what = name + " across ranks computes a different output " +
                                                 std::to_string(i) + " than " + referenceName + ": " +
                                                 d.message();
                        same = pipelined ? Status::invalid(what + kMixesSamples) : Status::internal(what);
                    }
                // No serial run: the first schedule that ran the whole batch at once is the
                // reference (a pipeline's micro-batches differ where the model mixes samples).
                if (joined && same.isOk() && reference.empty() && !pipelined) {
                    reference = std::move(*joined);
                    referenceName = name;
                }
            }
            OPSCOPE_TRY(mpi.agree(same));
        }
        const std::uint64_t messagesBefore = transport->messagesSent(), bytesBefore = transport->bytesSent();
        std::vector<trace::Trace> traces;
        std::vector<double> zeros, durations;
        for (int i = 0; i < iterations; ++i) {
            say(name + " " + std::to_string(i + 1) + "/" + std::to_string(iterations) + " across " +
                std::to_string(mpi.size()) + " ranks");
            runOnce();
            traces.push_back(recorder.finish(name));
            zeros.push_back(std::chrono::duration<double>(recorder.zero().time_since_epoch()).count());
            durations.push_back(traces.back().duration());
        }
        // Each run's makespan on rank 0's clock: from the first rank's start to the last one's end.
        const json mineTimes = {zeros, durations, transport->messagesSent() - messagesBefore,
                      transport->bytesSent() - bytesBefore};
        Expected<std::vector<std::vector<std::byte>>> allTimes = mpi.gather(packJson(mineTimes));
        if (!allTimes)
            return allTimes.status();
        int median = 0;
        if (me == 0) {
            ProfileRun r;
            r.name = name;
            r.measured = true;
            r.predictedMs = predicted * 1e3;
            RankRunInfo info;
            info.crossRankEdges = edges.size();
            info.microbatches = int(batches.size());
            info.memory = planned;
            std::vector<json> times;
            for (const auto &b : *allTimes)
                times.push_back(unpackJson(b));
            median = timeAcrossRanks(times, result.clockStart, iterations, r, info);
            result.runs.push_back(std::move(r));
            result.info.push_back(info);
        }
        MPI_Bcast(&median, 1, MPI_INT, 0, mpi.comm());
        trace::Trace &mine = traces[std::size_t(median)];
        json arena = json::array();
        if (const std::shared_ptr<const MemoryPlan> memory = (*session)->memoryPlan(feeds, &*local)) {
            schedule::addMemoryCounters(graph, *memory, mine);
            for (const DeviceMemory &dm : memory->devices)
                arena.push_back({dm.device, dm.plannedBytes});
        }
        Expected<std::vector<std::vector<std::byte>>> allTraces = mpi.gather(traceToBytes(mine));
        Expected<std::vector<std::vector<std::byte>>> allArenas = mpi.gather(packJson(arena));
        if (!allTraces || !allArenas)
            return !allTraces ? allTraces.status() : allArenas.status();
        if (me == 0) {
            Spread s{result.runs.size() - 1, {}, edges, labels};
            for (int q = 0; q < mpi.size(); ++q) {
                Expected<trace::Trace> t = traceFromBytes((*allTraces)[std::size_t(q)]);
                if (!t)
                    return t.status();
                s.gathered.traces.push_back(std::move(*t));
                s.gathered.zero.push_back(unpackJson((*allTimes)[std::size_t(q)])[0][std::size_t(median)].get<double>());
                for (const json &a : unpackJson((*allArenas)[std::size_t(q)]))
                    result.runs.back().arenaBytes.emplace_back(a[0].get<std::string>(), a[1].get<std::uint64_t>());
            }
            spreads.push_back(std::move(s));
        }
        transport.reset();

        // The same plan in rank 0's process alone: what the MPI transport costs.
        if (options.inProcess && wholeFitsRankZero) {
            Status oneRun;
            if (me == 0) {
                say(name + " in one process");
                Expected<ProfileRun> r = runInOneProcess(part->model, global, feeds, devices, threads, iterations,
                                                         name + ", one process", predicted);
                if (r) {
                    result.runs.push_back(std::move(*r));
                    result.info.push_back({});
                } else {
                    oneRun = r.status();
                }
            }
            OPSCOPE_TRY(mpi.agree(oneRun, rankZeroAlone()));
        }
    }

    // 6. Clocks again, and the merged traces on rank 0's clock.
    Expected<std::vector<ClockOffset>> end = measureClockOffsets(mpi);
    if (!end)
        return end.status();
    result.clockEnd = *end;
    if (me == 0)
        for (Spread &s : spreads) {
            std::vector<std::string> names;
            for (int d = 0; d < devices; ++d)
                names.push_back(deviceName(d / perRank, d % perRank));
            finishSpreadRun(result.runs[s.run], result.info[s.run], s.gathered.traces, s.gathered.zero,
                            result.clockStart, result.clockEnd, s.edges, s.labels, names);
        }
    return result;
}

} // namespace opscope::dist

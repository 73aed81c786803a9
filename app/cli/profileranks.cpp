// opscope-cli profile --ranks, under mpirun: the schedules run across MPI ranks (dist/). Every rank
// parses, loads and optimizes alike and agrees on success before any collective work, so a bad
// argument ends every rank with one message (from rank 0) instead of leaving some waiting; only
// rank 0 prints results and writes the trace.

#include "commands.h"
#include "onnx/embeddedweights.h"
#include "profileformat.h"
#include "runtime/randominputs.h"
#include "trace/chrometrace.h"
#include "util/systemload.h"
#include "util/systemmemory.h"

#ifdef OPSCOPE_HAVE_MPI
#include "rankprofile.h"
#endif

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string_view>
#include <thread>
#include <unistd.h>

namespace opscope::cli {

#ifndef OPSCOPE_HAVE_MPI

int runProfileRanks(const ProfileArgs &)
{
    return reportError(Status::unsupported("this opscope-cli was built without MPI: install libopenmpi-dev and "
                                           "openmpi-bin (scripts/setup.sh does) and build again"));
}

#else

namespace {

struct Prepared
{
    Model model;
    dist::RankProfileOptions options;
    std::vector<std::string> notes;
};

Expected<Prepared> prepare(const ProfileArgs &args)
{
    if (!args.simulate.empty())
        return Status::invalid("--simulate predicts without running anything; --ranks runs across MPI ranks: "
                               "use one of them");
    if (args.devicesGiven)
        return Status::invalid("with --ranks each rank's devices are --devices-per-rank cpu:K (and the ranks are "
                               "mpirun's -np): --devices is for one process");
    Expected<int> perRank = deviceCount(args.devicesPerRank, "--devices-per-rank");
    if (!perRank)
        return perRank.status();
    Prepared p;
    Expected<std::vector<schedule::Strategy>> listed = schedule::strategiesFromNames(args.schedules);
    if (!listed)
        return listed.status();
    if (std::find(listed->begin(), listed->end(), schedule::Strategy::Parallel) != listed->end())
        return Status::invalid("parallel runs the workers of one device: across ranks use greedy, round-robin "
                               "or pipeline (serial and parallel run in one process without --ranks)");
    p.options.strategies = std::move(*listed);
    // Embedded weights mapped from the file: a rank holds (pages in) only those its nodes read.
    LoadOptions load;
    load.mapEmbeddedWeights = true;
    Expected<ImportResult> loaded = loadModel(args.model, load);
    if (!loaded)
        return loaded.status();
    if (!args.trace.empty())
        OPSCOPE_TRY(checkWritePath(args.trace, "--trace", modelFiles(args.model, loaded->model), args.force,
                                   feedFiles(args.inputs)));
    p.model = loaded->model;
    p.model.graph.assignNodeNames();
    if (Expected<double> opt = optimizeForRun(p.model, args.optimize); !opt)
        return opt.status();
    // Weights the passes made (a Conv with its BatchNorm folded in, fused or transposed weights)
    // are new heap tensors on every rank; spilled to a scratch file and mapped, a rank holds only
    // those its nodes read, as it does the model file's own weights.
    if (Expected<SpilledWeights> spilled = spillHeapWeights(p.model.graph, scratchFolder()); !spilled)
        p.notes.push_back("the weights the passes made stay on every rank's heap: " + spilled.status().message());
    Expected<GivenInputs> given = givenInputsFor(p.model.graph, args.inputs, args.dims);
    if (!given)
        return given.status();
    p.options.devicesPerRank = *perRank;
    p.options.threadsPerDevice = std::max(1, args.threadsPerDevice);
    p.options.iterations = args.iterations;
    p.options.seed = args.seed;
    p.options.given = std::move(given->tensors);
    p.options.dims = given->dims;
    p.options.transferTimeoutSeconds = args.transferTimeout;
    p.options.inProcess = args.inProcess;
    p.options.microbatches = args.microbatches;
    if (!args.memoryPerRank.empty()) {
        Expected<std::uint64_t> bytes = parseByteSize(args.memoryPerRank);
        if (!bytes)
            return bytes.status().withContext("--memory-per-rank");
        p.options.memoryPerRank = *bytes;
    }
    if (args.microbatches > 1 && std::find(p.options.strategies.begin(), p.options.strategies.end(),
                                           schedule::Strategy::Pipeline) == p.options.strategies.end())
        return Status::invalid("--microbatches splits the batch for the pipeline schedule: add --schedule pipeline");
    return p;
}

// The options that decide what every rank does, as (option, value): ranks started with other ones
// (mpirun's MPMD form, `-np 1 A : -np 1 B`) posted different collectives and waited for each other
// until the timeout, or ran on different data and said nothing. Inputs by their bytes: each host
// may read them from its own path.
std::vector<std::pair<std::string, std::string>> sharedOptions(const ProfileArgs &args, const Prepared &p)
{
    std::string schedules;
    for (const std::string &s : args.schedules)
        schedules += (schedules.empty() ? "" : ",") + s;
    std::string dims;
    for (const auto &[name, value] : p.options.dims)
        dims += (dims.empty() ? "" : ",") + name + "=" + std::to_string(value);
    std::string inputs;
    for (const auto &[name, t] : p.options.given) {
        std::size_t digest = 0;
        if (t.dtype() == DataType::String) {
            for (const std::string &e : t.strings())
                digest = digest * 1000003u ^ std::hash<std::string>{}(e);
        } else {
            const auto *b = reinterpret_cast<const char *>(t.bytes());
            digest = std::hash<std::string_view>{}(std::string_view(b, b ? t.byteSize() : 0));
        }
        inputs += (inputs.empty() ? "" : ",") + name + " " + t.shapeText() + " #" + std::to_string(digest);
    }
    return {{"--schedule", schedules},
            {"--devices-per-rank", args.devicesPerRank},
            {"--threads-per-device", std::to_string(p.options.threadsPerDevice)},
            {"--iterations", std::to_string(p.options.iterations)},
            {"--microbatches", std::to_string(p.options.microbatches)},
            {"--seed", std::to_string(p.options.seed)},
            {"--dim", dims.empty() ? "(none)" : dims},
            {"--input", inputs.empty() ? "(none)" : inputs},
            {"--optimize", args.optimize},
            {"--memory-per-rank", args.memoryPerRank.empty() ? "(free memory)" : args.memoryPerRank},
            {"--transfer-timeout", std::to_string(args.transferTimeout)},
            {"--in-process", p.options.inProcess ? "on" : "off"}};
}

// Collective: ok when every rank was started with rank 0's options, else which option differs.
Status sameOptionsOnEveryRank(dist::MpiContext &mpi, const ProfileArgs &args, const Prepared &p)
{
    const std::vector<std::pair<std::string, std::string>> mine = sharedOptions(args, p);
    std::string packed;
    for (const auto &[option, value] : mine)
        packed += option + '\n' + value + '\n';
    std::string root = packed;
    OPSCOPE_TRY(mpi.broadcast(root));
    Status st;
    if (root != packed) {
        std::istringstream in(root);
        std::string option, value;
        for (std::size_t i = 0; std::getline(in, option) && std::getline(in, value); ++i)
            if (i < mine.size() && (mine[i].first != option || mine[i].second != value)) {
                st = Status::invalid("started with " + option + " " + mine[i].second + ", rank 0 with " + value +
                                     ": every rank takes the same options (one mpirun command line, not one per "
                                     "rank)");
                break;
            }
        if (st)
            st = Status::invalid("started with other options than rank 0");
    }
    return mpi.agree(st);
}

std::string microseconds(double seconds)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.1f µs", seconds * 1e6);
    return b;
}

} // namespace

int runProfileRanks(const ProfileArgs &args)
{
    if (!dist::launchedByMpi())
        return reportError(Status::invalid("--ranks runs one process per MPI rank: start it with mpirun, e.g. "
                                           "mpirun -np 2 opscope-cli profile MODEL --ranks"));
    Expected<std::unique_ptr<dist::MpiContext>> started = dist::MpiContext::start(nullptr, nullptr);
    if (!started)
        return reportError(started.status());
    dist::MpiContext &mpi = **started;
    const bool root = mpi.rank() == 0;
    // Until the serial run sets it (50x its time), a rank that stops answering ends the job after
    // --transfer-timeout or 10 minutes: loading a large model is slow, hanging forever is worse.
    mpi.setTimeout(std::chrono::duration<double>(args.transferTimeout > 0 ? args.transferTimeout : 600.0));
    // Every rank prepares alike; one message from rank 0 if any failed (a warning once, too).
    Expected<Prepared> prepared = prepare(args);
    if (Status agreed = mpi.agree(prepared ? Status::ok() : prepared.status()); !agreed)
        return root ? reportError(agreed) : ExitUserError;
    if (Status same = sameOptionsOnEveryRank(mpi, args, *prepared); !same)
        return root ? reportError(same) : ExitUserError;
    // More workers on this host than cores: the ranks time-slice instead of running side by side.
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(mpi.comm(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int onThisHost = 1;
    MPI_Comm_size(node, &onThisHost);
    MPI_Comm_free(&node);
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const int perRank = prepared->options.devicesPerRank * prepared->options.threadsPerDevice;
    const long wanted = long(onThisHost) * perRank;
    std::vector<std::string> warnings;
    if (wanted > long(cores))
        warnings.push_back(std::to_string(onThisHost) + " ranks on this host with " + args.devicesPerRank + " and " +
                           std::to_string(prepared->options.threadsPerDevice) + " thread(s) each need " +
                           std::to_string(wanted) + " cores, but it has " + std::to_string(cores) +
                           ": the ranks share cores, so times measure time-slicing, not parallelism");
    // mpirun binds each rank to one core by default: a rank's devices would then share it.
    int bound = int(usableCores()), leastBound = bound;
    MPI_Allreduce(&bound, &leastBound, 1, MPI_INT, MPI_MIN, mpi.comm());
    if (leastBound < perRank)
        warnings.push_back("a rank may use only " + std::to_string(leastBound) + " core(s) but runs " +
                           std::to_string(perRank) + " worker(s) (" + args.devicesPerRank + " × " +
                           std::to_string(prepared->options.threadsPerDevice) + " thread(s)): start mpirun with "
                           "--bind-to none, or --map-by slot:PE=" + std::to_string(perRank));
    if (mpi.size() == 1)
        warnings.push_back("one rank: the schedules have only rank 0's devices to spread over; start mpirun "
                           "with -np 2 or more");
    if (root)
        printWarnings(warnings);
    if (root && !args.json && isatty(STDERR_FILENO))
        prepared->options.progress = [](const std::string &s) { std::cerr << "opscope-cli: " << s << "\r" << std::flush; };
    Expected<dist::RankProfile> profile = dist::profileAcrossRanks(mpi, prepared->model, prepared->options);
    if (root && !args.json && isatty(STDERR_FILENO))
        std::cerr << "\33[2K\r" << std::flush; // the progress line
    if (!profile)
        return root ? reportError(profile.status()) : ExitUserError;
    if (!root)
        return ExitOk;
    const std::vector<schedule::ProfileRun> &reports = profile->runs;
    const bool limitGiven = prepared->options.memoryPerRank != 0;
    // After the table or the JSON: the notes, then the schedules refused for memory, which are
    // errors — the rows printed ran, the ones refused did not.
    const auto finish = [&](const std::vector<std::string> &notes) {
        for (const std::string &n : notes)
            std::cerr << "opscope-cli: note: " << n << '\n';
        for (const std::string &r : profile->refused)
            reportError(Status::unsupported(r));
        return profile->refused.empty() ? ExitOk : ExitUserError;
    };
    std::vector<std::string> notes = schedule::timingNotes(reports, args.iterations, loadAverage(), cores);
    notes.insert(notes.begin(), profile->notes.begin(), profile->notes.end());
    notes.insert(notes.begin(), prepared->notes.begin(), prepared->notes.end());
    if (!args.trace.empty())
        if (Status written = trace::writeChromeTrace(schedule::combinedTrace(reports, args.model), args.trace); !written)
            return reportError(written);
    double worstOffset = 0.0, worstDrift = 0.0;
    for (std::size_t r = 1; r < profile->clockStart.size(); ++r) {
        const dist::ClockOffset &a = profile->clockStart[r], &b = profile->clockEnd[r];
        worstOffset = std::max(worstOffset, std::abs(a.offset));
        if (b.at > a.at)
            worstDrift = std::max(worstDrift, std::abs(b.offset - a.offset) / (b.at - a.at));
    }
    const auto count = [](std::size_t n, const char *one, const char *many) {
        return std::to_string(n) + " " + (n == 1 ? one : many);
    };
    const std::string devices = count(std::size_t(profile->ranks), "rank", "ranks") + " × " + args.devicesPerRank;
    if (args.json) {
        nlohmann::ordered_json j = profileJson(args, reports, notes);
        j["devices"] = devices;
        j["ranks"] = profile->ranks;
        j["devices_per_rank"] = args.devicesPerRank;
        j["link"] = {{"latency_us", profile->link.latencySeconds * 1e6},
                     {"bandwidth_gbps", profile->link.bytesPerSecond * 1e-9}};
        j["clock_offsets_us"] = nlohmann::ordered_json::array();
        for (const dist::ClockOffset &c : profile->clockStart)
            j["clock_offsets_us"].push_back(c.offset * 1e6);
        j["clock_drift_ppm"] = worstDrift * 1e6;
        j["transfer_timeout_s"] = profile->transferTimeoutSeconds;
        for (std::size_t i = 0; i < reports.size() && i < profile->info.size(); ++i) {
            j["schedules"][i]["cross_rank_transfers"] = profile->info[i].crossRankEdges;
            j["schedules"][i]["mpi_messages"] = profile->info[i].mpiMessages;
            j["schedules"][i]["mpi_bytes"] = profile->info[i].mpiBytes;
            if (!profile->info[i].memory.empty()) {
                nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
                for (std::size_t r = 0; r < profile->info[i].memory.size(); ++r) {
                    const dist::RankMemory &m = profile->info[i].memory[r];
                    ranks.push_back({{"rank", r},
                                     {"needs_bytes", m.total(limitGiven)},
                                     {"intermediate_bytes", m.arenaBytes + m.outsideBytes},
                                     {"send_buffer_bytes", m.sendBytes},
                                     {"mapped_weight_bytes", m.mappedBytes},
                                     {"embedded_weight_bytes", m.embeddedBytes},
                                     {"available_bytes", r < profile->available.size() ? profile->available[r] : 0}});
                }
                j["schedules"][i]["rank_memory"] = std::move(ranks);
            }
        }
        j["memory_per_rank"] = limitGiven ? "given" : "free memory";
        j["refused"] = profile->refused;
        std::cout << j.dump(2) << '\n';
        return finish(notes);
    }
    if (!reports.empty())
        printProfileTable(args, reports, devices, prepared->options.threadsPerDevice);
    if (profile->ranks > 1)
        std::printf("\nbetween ranks: %s latency, %.2f GB/s (ping-pong, rank 0 ↔ 1); clocks within %s, drift %.1f "
                    "ppm\n",
                    microseconds(profile->link.latencySeconds).c_str(), profile->link.bytesPerSecond * 1e-9,
                    microseconds(worstOffset).c_str(), worstDrift * 1e6);
    for (std::size_t i = 0; i < reports.size() && i < profile->info.size(); ++i)
        if (profile->info[i].crossRankEdges)
            std::printf("%s: %s per run, %s (%s) sent over MPI\n", reports[i].name.c_str(),
                        count(profile->info[i].crossRankEdges, "cross-rank transfer", "cross-rank transfers").c_str(),
                        count(profile->info[i].mpiMessages, "tensor", "tensors").c_str(),
                        bytesText(profile->info[i].mpiBytes).c_str()); // MiB like the memory lines
    // What each rank's share was predicted to take (the check that refuses plans that do not fit).
    for (std::size_t i = 0; i < reports.size() && i < profile->info.size(); ++i) {
        const std::vector<dist::RankMemory> &memory = profile->info[i].memory;
        if (memory.empty())
            continue;
        // Rank by rank: "needs 3.3 MiB, 0 B (of 22.0 GiB, 22.0 GiB free)" left the reader to pair
        // the two lists.
        std::string shares;
        for (std::size_t r = 0; r < memory.size(); ++r)
            shares += std::string(r ? ", rank " : "rank ") + std::to_string(r) + (r ? "'s " : "'s share needs ") +
                      bytesText(memory[r].total(limitGiven)) + " of " +
                      (r < profile->available.size() && profile->available[r] ? bytesText(profile->available[r])
                                                                              : std::string("unknown")) +
                      (limitGiven ? " allowed" : " free");
        std::printf("%s: %s\n", reports[i].name.c_str(), shares.c_str());
    }
    return finish(notes);
}

#endif

} // namespace opscope::cli

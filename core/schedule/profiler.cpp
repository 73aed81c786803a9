#include "schedule/profiler.h"

#include "schedule/memorycounters.h"

#include "onnx/shaperefresh.h"
#include "runtime/backend.h"
#include "runtime/conformance.h"
#include "runtime/microbatches.h"
#include "runtime/randominputs.h"
#include "runtime/session.h"
#include "runtime/stagerunner.h"
#include "schedule/partition.h"
#include "schedule/pipeline.h"
#include "util/systemload.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <cmath>
#include <map>

namespace opscope::schedule {

void summarizeRun(ProfileRun &r)
{
    const trace::Trace &t = r.trace;
    const double makespan = t.duration();
    std::map<std::string, std::pair<double, int>> busy; // device → (busy seconds, queues)
    const std::vector<bool> queuedOnly = trace::queuedOnlyLanes(t);
    for (std::size_t i = 0; i < t.lanes.size(); ++i) {
        const trace::Lane &l = t.lanes[i];
        if (trace::isHostLane(l.device) || queuedOnly[i])
            continue; // setup, not a device; launches whose run the device's own lanes show
        // A copy queue (a GPU's copy engine: nothing but Recv) is a link, not compute capacity.
        const bool copies = std::all_of(l.spans.begin(), l.spans.end(), [&](const trace::Span &s) {
            return s.category == trace::kIdleCategory || t.strings[s.op] == "Recv";
        });
        if (copies && !l.spans.empty())
            continue;
        busy[l.device].first += trace::laneStats(l, makespan).busy;
        ++busy[l.device].second;
    }
    r.idleMs = 0.0;
    r.utilization.clear();
    r.queues.clear();
    for (const auto &[device, b] : busy) {
        r.queues[device] = b.second;
        const double capacity = makespan * b.second; // each queue could have been busy throughout
        r.utilization.emplace_back(device, capacity > 0 ? b.first / capacity : 0.0);
        r.idleMs += std::max(0.0, capacity - b.first) * 1e3;
    }
    // Overlap: the share of transfer time during which some other lane computes — the source
    // device included (a Send hands over and returns; the copy runs on the destination). Covered
    // time is the union over lanes, not counted twice.
    double transferTime = 0.0, overlapped = 0.0;
    for (const trace::Transfer &x : t.transfers) {
        transferTime += x.end - x.start;
        std::vector<std::pair<double, double>> covered;
        for (std::uint32_t li = 0; li < t.lanes.size(); ++li) {
            if (li == x.toLane)
                continue;
            const std::vector<trace::Span> &spans = t.lanes[li].spans;
            // Spans are sorted by start: from the last one starting before the window.
            auto it = std::lower_bound(spans.begin(), spans.end(), x.start,
                                       [](const trace::Span &s, double v) { return s.start < v; });
            if (it != spans.begin())
                --it;
            for (; it != spans.end() && it->start < x.end; ++it)
                if (it->category != trace::kIdleCategory && it->end > x.start) // waiting is not computing
                    covered.emplace_back(std::max(it->start, x.start), std::min(it->end, x.end));
        }
        std::sort(covered.begin(), covered.end());
        double reach = x.start;
        for (const auto &[a, b] : covered) {
            overlapped += std::max(0.0, b - std::max(a, reach));
            reach = std::max(reach, b);
        }
    }
    // A GPU's own copies (CUPTI's, on its stream lanes) are transfers too: their overlap is the
    // share of their time a kernel runs on another stream of the same GPU — copy/compute overlap,
    // as Nsight Systems shows it.
    std::size_t copies = 0;
    const auto isCopy = [&](const trace::Span &s) { return t.strings[s.op].starts_with("Memcpy"); };
    for (std::uint32_t li = 0; li < t.lanes.size(); ++li) {
        const trace::Lane &lane = t.lanes[li];
        if (!trace::isStreamLane(lane) || trace::isHostLane(lane.device))
            continue;
        for (const trace::Span &x : lane.spans) {
            if (!isCopy(x) || x.end <= x.start)
                continue;
            ++copies;
            transferTime += x.end - x.start;
            std::vector<std::pair<double, double>> covered;
            for (std::uint32_t lj = 0; lj < t.lanes.size(); ++lj) {
                const trace::Lane &other = t.lanes[lj];
                if (lj == li || other.device != lane.device || !trace::isStreamLane(other))
                    continue;
                for (const trace::Span &k : other.spans)
                    if (!isCopy(k) && k.category != trace::kIdleCategory && k.start < x.end && k.end > x.start)
                        covered.emplace_back(std::max(k.start, x.start), std::min(k.end, x.end));
            }
            std::sort(covered.begin(), covered.end());
            double reach = x.start;
            for (const auto &[a, b] : covered) {
                overlapped += std::max(0.0, b - std::max(a, reach));
                reach = std::max(reach, b);
            }
        }
    }
    r.overlap = transferTime > 0 ? overlapped / transferTime : 0.0;
    r.transfers = t.transfers.size() + copies;
}

trace::Trace combinedTrace(const std::vector<ProfileRun> &runs, const std::string &name)
{
    trace::Trace all;
    all.name = name;
    for (const ProfileRun &r : runs) {
        const auto laneBase = std::uint32_t(all.lanes.size());
        for (trace::Lane l : r.trace.lanes) {
            l.device = r.name + "/" + l.device;
            for (trace::Span &s : l.spans) {
                s.name = all.intern(r.trace.strings[s.name]);
                s.op = all.intern(r.trace.strings[s.op]);
                if (s.shapes != trace::kNoString)
                    s.shapes = all.intern(r.trace.strings[s.shapes]);
                if (s.detail != trace::kNoString)
                    s.detail = all.intern(r.trace.strings[s.detail]);
            }
            all.lanes.push_back(std::move(l));
        }
        for (trace::Transfer x : r.trace.transfers) {
            x.fromLane += laneBase;
            x.toLane += laneBase;
            all.transfers.push_back(x);
        }
        for (trace::Launch x : r.trace.launches) {
            x.fromLane += laneBase;
            x.toLane += laneBase;
            all.launches.push_back(x);
        }
        for (trace::Counter c : r.trace.counters) {
            c.device = r.name + "/" + c.device;
            all.counters.push_back(std::move(c));
        }
    }
    return all;
}

std::vector<ProfileRun> splitSession(const trace::Trace &combined)
{
    const bool session = !combined.lanes.empty() &&
                         std::all_of(combined.lanes.begin(), combined.lanes.end(),
                                     [](const trace::Lane &l) { return l.device.find('/') != std::string::npos; });
    std::vector<ProfileRun> runs;
    std::map<std::string, std::size_t> runOf;
    std::vector<std::pair<std::size_t, std::uint32_t>> laneAt(combined.lanes.size()); // run, lane there
    for (std::size_t i = 0; i < combined.lanes.size(); ++i) {
        const trace::Lane &l = combined.lanes[i];
        const std::size_t slash = session ? l.device.find('/') : std::string::npos;
        const std::string runName = session ? l.device.substr(0, slash) : combined.name;
        const auto [it, inserted] = runOf.emplace(runName, runs.size());
        if (inserted) {
            runs.emplace_back();
            runs.back().name = runName;
            runs.back().measured = true;
            runs.back().trace.name = runName;
        }
        trace::Trace &t = runs[it->second].trace;
        trace::Lane lane{session ? l.device.substr(slash + 1) : l.device, l.queue, {}, l.label};
        lane.spans.reserve(l.spans.size());
        for (trace::Span s : l.spans) {
            s.name = t.intern(combined.strings[s.name]);
            s.op = t.intern(combined.strings[s.op]);
            if (s.shapes != trace::kNoString)
                s.shapes = t.intern(combined.strings[s.shapes]);
            if (s.detail != trace::kNoString)
                s.detail = t.intern(combined.strings[s.detail]);
            lane.spans.push_back(s);
        }
        laneAt[i] = {it->second, std::uint32_t(t.lanes.size())};
        t.lanes.push_back(std::move(lane));
    }
    // Arrows (transfers, launches) go to the run both their lanes belong to, renumbered there.
    const auto splitArrows = [&](const auto &arrows, auto member) {
        for (const auto &x : arrows) {
            if (x.fromLane >= laneAt.size() || x.toLane >= laneAt.size() ||
                laneAt[x.fromLane].first != laneAt[x.toLane].first)
                continue;
            auto y = x;
            y.fromLane = laneAt[x.fromLane].second;
            y.toLane = laneAt[x.toLane].second;
            (runs[laneAt[x.fromLane].first].trace.*member).push_back(y);
        }
    };
    splitArrows(combined.transfers, &trace::Trace::transfers);
    splitArrows(combined.launches, &trace::Trace::launches);
    for (const trace::Counter &c : combined.counters) {
        const std::size_t slash = session ? c.device.find('/') : std::string::npos;
        const auto it = runOf.find(slash != std::string::npos ? c.device.substr(0, slash) : combined.name);
        if (it == runOf.end())
            continue;
        trace::Counter own = c;
        own.device = slash != std::string::npos ? c.device.substr(slash + 1) : c.device;
        runs[it->second].trace.counters.push_back(std::move(own));
    }
    for (ProfileRun &r : runs) {
        // Each run on its own clock: its first span starts at 0 as when it was recorded.
        double t0 = std::numeric_limits<double>::max();
        for (const trace::Lane &l : r.trace.lanes)
            if (!l.spans.empty())
                t0 = std::min(t0, l.spans.front().start);
        if (t0 != std::numeric_limits<double>::max() && t0 != 0.0) {
            for (trace::Lane &l : r.trace.lanes)
                for (trace::Span &s : l.spans)
                    s.start -= t0, s.end -= t0;
            for (trace::Transfer &x : r.trace.transfers)
                x.start -= t0, x.end -= t0;
            for (trace::Launch &x : r.trace.launches)
                x.start -= t0, x.end -= t0;
            for (trace::Counter &c : r.trace.counters)
                for (auto &sample : c.samples)
                    sample.first -= t0;
        }
        summarizeRun(r);
        r.makespanMs = r.trace.duration() * 1e3;
    }
    return runs;
}

std::unordered_map<std::string, double> opSeconds(const trace::Trace &trace)
{
    std::unordered_map<std::string, double> seconds;
    const std::vector<bool> queuedOnly = trace::queuedOnlyLanes(trace);
    for (std::size_t i = 0; i < trace.lanes.size(); ++i)
        for (const trace::Span &s : trace.lanes[i].spans)
            if (s.category != trace::kIdleCategory && !trace::isHostLane(trace.lanes[i].device) && !queuedOnly[i])
                seconds[trace.strings[s.name]] += s.end - s.start;
    return seconds;
}

// Schedules change the order of float sums (other threads, other kernels per device), so float
// outputs are compared relative to the output's own scale — max |a - b| / max |b| <= 1e-3, the
// tolerance bench/compare_ort.py holds opscope to against ONNX Runtime; elementwise ratios
// explode near zero. Integer and bool outputs must match exactly.
Status sameWithinScale(const RuntimeTensor &got, const RuntimeTensor &want)
{
    if (got.dtype() != want.dtype() || got.shape() != want.shape())
        return Status::internal("dtype or shape differs: " + got.shapeText() + " vs " + want.shapeText());
    if (got.dtype() == DataType::String)
        return Status::ok();
    const bool isFloat = got.dtype() == DataType::Float || got.dtype() == DataType::Double ||
                         got.dtype() == DataType::Float16 || got.dtype() == DataType::BFloat16;
    double worst = 0.0, scale = 0.0;
    for (std::int64_t k = 0; k < got.elementCount(); ++k) {
        const double a = got.valueAsDouble(k), b = want.valueAsDouble(k);
        if (std::isnan(a) != std::isnan(b))
            return Status::internal("element " + std::to_string(k) + " is NaN in one run only");
        if (std::isnan(a) || (std::isinf(a) && a == b))
            continue;
        worst = std::max(worst, std::abs(a - b));
        scale = std::max(scale, std::abs(b));
    }
    const double allowed = isFloat ? 1e-3 * std::max(scale, 1e-12) : 0.0;
    if (worst > allowed)
        return Status::internal("max |difference| " + std::to_string(worst) + " exceeds " + std::to_string(allowed) +
                                " (1e-3 of the output's scale)");
    return Status::ok();
}

void keepMedianRun(std::vector<std::pair<double, trace::Trace>> &timed, ProfileRun &r)
{
    std::sort(timed.begin(), timed.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    r.makespanMs = timed[timed.size() / 2].first * 1e3;
    r.minMs = timed.front().first * 1e3;
    r.maxMs = timed.back().first * 1e3;
    r.trace = std::move(timed[timed.size() / 2].second);
}

void summarizePipeline(ProfileRun &r, int microbatches)
{
    std::map<std::string, double> busy;
    for (const trace::Lane &l : r.trace.lanes)
        if (!trace::isHostLane(l.device))
            busy[l.device] += trace::laneStats(l, r.trace.duration()).busy;
    int stages = 0;
    double slowest = 0.0, all = 0.0;
    for (const auto &[d, b] : busy)
        if (b > 0.0)
            ++stages, slowest = std::max(slowest, b), all += b;
    const double span = r.trace.duration();
    r.pipeline.microbatches = microbatches;
    r.pipeline.stages = stages;
    r.pipeline.bubble = span > 0 && stages > 0 ? 1.0 - all / (stages * span) : 0.0;
    r.pipeline.idealBubble = idealBubble(microbatches, stages);
    r.pipeline.idealMs = slowest * double(microbatches + stages - 1) / double(microbatches) * 1e3;
}

namespace {

// Every device of the model is listed, the ones a run left idle at 0 %: otherwise serial on
// cpu:2 reads as if the second device did not exist.
void listEveryDevice(ProfileRun &r, const CostModel &cost)
{
    for (const auto &device : cost.devices)
        if (std::none_of(r.utilization.begin(), r.utilization.end(),
                         [&](const auto &u) { return u.first == device.name; }))
            r.utilization.emplace_back(device.name, 0.0);
}

// The pipeline schedule with micro-batches, in this process: each device a stage in a thread of
// its own (runtime/stagerunner.h), the batch split along dim 0, the joined outputs checked against
// the reference like any schedule's.
Status measurePipelined(const InferenceSession &session, const ExecutionPlan &plan, const Feeds &feeds,
                        const ProfileOptions &options, int threads, ProfileRun &r,
                        std::vector<RuntimeTensor> &reference)
{
    Expected<std::vector<Feeds>> split = splitFeeds(feeds, options.microbatches, session);
    if (!split)
        return split.status();
    std::vector<std::unique_ptr<Backend>> owned;
    PipelineOptions po;
    po.threads = threads;
    po.cancel = options.cancel;
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        owned.push_back(std::make_unique<CpuBackend>(int(d), threads));
        po.backends.push_back(owned.back().get());
    }
    r.name += ", " + std::to_string(options.microbatches) + " micro-batches";
    Expected<std::vector<std::vector<RuntimeTensor>>> out = runPipelined(session, plan, *split, po); // warm-up
    if (!out)
        return microbatchRunFailed(out.status(), options.microbatches).withContext(r.name);
    trace::Recorder recorder(plan.devices);
    po.onStep = [&recorder](const StepEvent &e, int m) { recorder.onStep(e, " #" + std::to_string(m)); };
    std::vector<std::pair<double, trace::Trace>> timed;
    for (int i = 0; i < std::max(1, options.iterations); ++i) {
        if (options.progress)
            options.progress(r.name + " " + std::to_string(i + 1) + "/" + std::to_string(options.iterations));
        recorder.begin();
        out = runPipelined(session, plan, *split, po);
        if (!out)
            return out.status().withContext(r.name);
        trace::Trace t = recorder.finish(r.name);
        timed.emplace_back(t.duration(), std::move(t));
    }
    // The micro-batches' outputs joined into the batch's, against the reference. A model whose
    // outputs mix the batch's samples (a reduction or softmax over dim 0, an output without the
    // batch) computes something else per micro-batch: the user's model, not a bug.
    Expected<std::vector<RuntimeTensor>> joined = joinMicrobatches(*out);
    if (!joined)
        return joined.status().withContext(r.name);
    if (reference.empty())
        return Status::internal(r.name + " has no serial outputs to be checked against");
    for (std::size_t i = 0; i < reference.size() && i < joined->size(); ++i)
        if (Status same = sameWithinScale((*joined)[i], reference[i]); !same)
            return Status::invalid(r.name + " computes a different output '" +
                                   (i < session.outputs().size() ? session.outputs()[i].name : std::to_string(i)) +
                                   "' than serial: " + same.message() + kMixesSamples);
    keepMedianRun(timed, r);
    r.measured = true;
    summarizeRun(r);
    summarizePipeline(r, options.microbatches);
    return Status::ok();
}

} // namespace

Expected<Model> withBoundInputDims(const Model &model, const ProfileOptions &options)
{
    Model bound = model;
    bool changed = false;
    Graph &g = bound.graph;
    for (ValueId v : g.inputs()) {
        Value &value = g.value(v);
        if (value.initializer || !value.type.shape)
            continue;
        const RuntimeTensor *given = nullptr;
        for (const auto &[name, tensor] : options.given)
            if (name == value.name && tensor.isValid())
                given = &tensor;
        std::vector<Dim> &dims = value.type.shape->dims;
        for (std::size_t k = 0; k < dims.size(); ++k) {
            if (dims[k].isKnown())
                continue;
            if (given && given->shape().size() == dims.size()) {
                dims[k] = Dim::known(given->dim(k));
                changed = true;
            } else if (const auto it = options.dims.find(dims[k].symbol); dims[k].isSymbolic() && it != options.dims.end()) {
                dims[k] = Dim::known(it->second);
                changed = true;
            }
        }
    }
    if (changed)
        if (Expected<std::size_t> refreshed = refreshShapes(bound); !refreshed)
            return refreshed.status().withContext("inferring shapes for the bound dims");
    return bound;
}

Expected<std::vector<ProfileRun>> profileModel(const Model &unbound, const ProfileOptions &options)
{
    // A prediction has no run to size tensors: it prices the shapes the bound dims give.
    Model boundModel;
    if (!options.simulate.empty()) {
        Expected<Model> bound = withBoundInputDims(unbound, options);
        if (!bound)
            return bound.status();
        boundModel = std::move(*bound);
    }
    const Model &model = options.simulate.empty() ? unbound : boundModel;
    const int threads = std::max(1, options.threadsPerDevice);
    CostModel cost = calibratedCpuModel(std::max(1, options.devices), threads);
    if (!options.simulate.empty()) {
        Expected<CostModel> sim = simulatedModel(options.simulate, cost);
        if (!sim)
            return sim.status();
        cost = *sim;
    }
    ScheduleOptions so;
    so.workers = int(cost.devices.size());
    so.sharedQueue = options.sharedQueue;
    // Plan devices are named like the model's (cpu:0…, or gpu:0… when simulating GPUs).
    so.devicePrefix = cost.devices.front().name.substr(0, cost.devices.front().name.find(':'));
    std::vector<ProfileRun> runs;
    std::vector<RuntimeTensor> reference;
    Feeds feeds;
    // Running for real, the schedules after serial are planned with the op times serial measured.
    const bool measure = options.simulate.empty() && options.measuredCosts &&
                         std::any_of(options.strategies.begin(), options.strategies.end(),
                                     [](Strategy s) { return s != Strategy::Serial; });
    if (measure && (options.strategies.empty() || options.strategies.front() != Strategy::Serial)) {
        ProfileOptions first = options;
        first.strategies = {Strategy::Serial};
        first.iterations = 3;
        first.allCoresSerial = false;
        first.measuredCosts = false;
        first.progress = nullptr;
        Expected<std::vector<ProfileRun>> serial = profileModel(model, first);
        if (!serial)
            return serial.status();
        cost.measuredSeconds = serial->front().opSeconds;
    }
    // The given inputs and seeded random ones for the rest, alike for every schedule.
    const auto feedsFor = [&](const InferenceSession &session) {
        RandomInputOptions ro;
        ro.seed = options.seed;
        ro.dims = options.dims;
        return randomFeeds(session, options.given, ro);
    };
    // The outputs every schedule is checked against come from the whole batch run serially. When
    // serial is not the first schedule they are computed here: the first schedule's own outputs
    // would be their own reference — a pipeline alone, whose micro-batches mix the samples of a
    // model that reduces over the batch, passed with wrong values, and one listed first blamed the
    // schedules after it.
    if (options.simulate.empty() && !options.strategies.empty() && options.strategies.front() != Strategy::Serial) {
        SessionOptions sessionOptions;
        sessionOptions.threads = threads;
        Expected<std::unique_ptr<InferenceSession>> session = InferenceSession::create(model, sessionOptions);
        if (!session)
            return session.status();
        Expected<Feeds> f = feedsFor(**session);
        if (!f)
            return f.status();
        feeds = std::move(*f);
        Expected<std::vector<RuntimeTensor>> outputs = (*session)->run(feeds);
        if (!outputs)
            return outputs.status().withContext("serial (the reference outputs)");
        reference = std::move(*outputs);
    }
    for (Strategy strategy : options.strategies) {
        if (options.cancel && options.cancel->load())
            return Status::error(ErrorKind::Unsupported, "profiling cancelled");
        ProfileRun r;
        r.name = strategyName(strategy);
        Expected<DevicePlan> planned = planForDevices(model, strategy, cost, so);
        if (!planned)
            return planned.status();
        const Model &runModel = planned->partition.model;
        const Schedule *plan = &planned->schedule;
        r.predictedMs = plan->predictedMakespan * 1e3;
        if (!options.simulate.empty()) {
            r.trace = predictedTrace(runModel.graph, *plan, r.name);
            summarizeRun(r);
            if (strategy == Strategy::Pipeline && options.microbatches > 1) {
                // What the real run would refuse, a prediction refuses too: a batch the model
                // fixes cannot be split (as declared, before --dim bound anything).
                for (ValueId v : unbound.graph.inputs()) {
                    const Value &in = unbound.graph.value(v);
                    if (in.initializer)
                        continue;
                    if (in.type.shape && !in.type.shape->dims.empty() && in.type.shape->dims[0].isKnown())
                        return Status::invalid("--microbatches splits dim 0 of input '" + in.name +
                                               "', which the model fixes at " +
                                               std::to_string(in.type.shape->dims[0].value) +
                                               ": export it with a symbolic batch dimension");
                    break; // the batch is the first input's dim 0
                }
                const PipelinePrediction p = predictPipeline(*plan, cost.devices.size(), options.microbatches);
                r.name += ", " + std::to_string(options.microbatches) + " micro-batches";
                r.predictedMs = p.makespanSeconds * 1e3;
                r.pipeline = {options.microbatches, p.stages, p.bubble, p.bubble, r.predictedMs};
            }
            r.makespanMs = r.predictedMs;
            runs.push_back(std::move(r));
            continue;
        }
        if (Status valid = validatePlan(runModel.graph, plan->plan); !valid)
            return Status::internal("the " + r.name + " plan is invalid: " + valid.message());
        SessionOptions sessionOptions;
        sessionOptions.threads = threads;
        Expected<std::unique_ptr<InferenceSession>> session =
            InferenceSession::create(runModel, sessionOptions);
        if (!session)
            return session.status();
        if (feeds.empty()) {
            Expected<Feeds> f = feedsFor(**session);
            if (!f)
                return f.status();
            feeds = std::move(*f);
        }
        if (strategy == Strategy::Pipeline && options.microbatches > 1) {
            const double predicted =
                predictPipeline(*plan, cost.devices.size(), options.microbatches).makespanSeconds * 1e3;
            OPSCOPE_TRY(measurePipelined(**session, plan->plan, feeds, options, threads, r, reference));
            r.predictedMs = predicted;
            listEveryDevice(r, cost);
            runs.push_back(std::move(r));
            continue;
        }
        trace::Recorder recorder(plan->plan.devices);
        recorder.setFeeds(&(*session)->model().graph, feeds);
        ExecOptions exec;
        exec.threads = threads;
        exec.cancel = options.cancel;
        exec.onStep = [&recorder](const StepEvent &e) { recorder.onStep(e); };
        Expected<std::vector<RuntimeTensor>> outputs = (*session)->run(feeds, &plan->plan, &exec); // warm-up
        if (!outputs)
            return outputs.status().withContext(r.name);
        std::vector<std::pair<double, trace::Trace>> timed;
        for (int i = 0; i < std::max(1, options.iterations); ++i) {
            if (options.progress)
                options.progress(r.name + " " + std::to_string(i + 1) + "/" +
                                 std::to_string(options.iterations));
            recorder.begin();
            outputs = (*session)->run(feeds, &plan->plan, &exec);
            if (!outputs)
                return outputs.status().withContext(r.name);
            trace::Trace t = recorder.finish(r.name);
            timed.emplace_back(t.duration(), std::move(t));
        }
        if (strategy == Strategy::Serial) {
            // Each op's median over the timed runs: steadier than any one run's times.
            std::unordered_map<std::string, std::vector<double>> samples;
            for (const auto &[makespan, t] : timed)
                for (const auto &[name, seconds] : opSeconds(t))
                    samples[name].push_back(seconds);
            for (auto &[name, v] : samples) {
                std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
                r.opSeconds[name] = v[v.size() / 2];
            }
        }
        keepMedianRun(timed, r);
        if (const std::shared_ptr<const MemoryPlan> memory = (*session)->memoryPlan(feeds, &plan->plan)) {
            addMemoryCounters(runModel.graph, *memory, r.trace);
            for (const DeviceMemory &dm : memory->devices)
                r.arenaBytes.emplace_back(dm.device, dm.plannedBytes);
        }
        r.measured = true;
        if (reference.empty()) {
            reference = *outputs;
        } else {
            for (std::size_t i = 0; i < reference.size() && i < outputs->size(); ++i)
                if (Status same = sameWithinScale((*outputs)[i], reference[i]); !same)
                    return Status::internal(r.name + " computes a different output '" +
                                            (i < (*session)->outputs().size() ? (*session)->outputs()[i].name
                                                                              : std::to_string(i)) +
                                            "': " + same.message());
        }
        summarizeRun(r);
        listEveryDevice(r, cost);
        if (options.measuredCosts && strategy == Strategy::Serial && cost.measuredSeconds.empty()) {
            cost.measuredSeconds = r.opSeconds;
            // Predictions from here on use measured op times: serial's too, to compare like with like
            // (also when serial runs alone, or as the all-cores row: FLOP estimates were 10x off).
            if (Expected<Schedule> again = makeSchedule(runModel.graph, strategy, cost, so))
                r.predictedMs = again->predictedMakespan * 1e3;
        }
        runs.push_back(std::move(r));
    }
    // The other way to use the same cores: one device, every core an intra-op thread.
    // Only beside a schedule that spreads work over the devices: it is what that one competes with
    // (serial alone asked for gets serial alone).
    const bool hasSerial = std::find(options.strategies.begin(), options.strategies.end(),
                                     Strategy::Serial) != options.strategies.end();
    const bool spreads = std::any_of(options.strategies.begin(), options.strategies.end(),
                                     [](Strategy s) { return s != Strategy::Serial; });
    if (options.simulate.empty() && options.devices > 1 && hasSerial && spreads && options.allCoresSerial) {
        ProfileOptions all = options;
        all.strategies = {Strategy::Serial};
        all.devices = 1;
        all.threadsPerDevice = options.devices * std::max(1, options.threadsPerDevice);
        all.allCoresSerial = false;
        Expected<std::vector<ProfileRun>> extra = profileModel(model, all);
        if (!extra)
            return extra.status();
        extra->front().name = "serial, " + std::to_string(all.threadsPerDevice) + " threads";
        extra->front().trace.name = extra->front().name;
        runs.push_back(std::move(extra->front()));
    }
    return runs;
}

std::vector<std::string> timingNotes(const std::vector<ProfileRun> &runs, int iterations,
                                     std::optional<double> load, unsigned cores, std::optional<double> othersBusy,
                                     int ourThreads)
{
    std::vector<std::string> notes;
    const auto ms = [](double v) {
        char b[32];
        std::snprintf(b, sizeof b, "%.3g ms", v);
        return std::string(b);
    };
    bool measured = false;
    for (const ProfileRun &r : runs)
        measured = measured || r.measured;
    if (!measured)
        return notes; // simulated: nothing was timed
    // Below five, one slow run moves the median: a user compared schedules on three and was misled.
    if (iterations < 5)
        notes.push_back("each time is the median of " + std::to_string(iterations) +
                        (iterations == 1 ? " run" : " runs") + "; use --iterations 10 or more to compare schedules");
    // A speed-up beyond the device count is no schedule's doing: the first run was slowed (a user
    // read "greedy: 2.89x" on 2 devices, the greedy row itself showing cpu:1 1% busy).
    if (!runs.empty() && runs.front().measured && runs.front().makespanMs > 0.0)
        for (std::size_t i = 1; i < runs.size(); ++i) {
            const ProfileRun &r = runs[i];
            const double speedup = r.makespanMs > 0.0 ? runs.front().makespanMs / r.makespanMs : 0.0;
            const std::size_t devices = std::max<std::size_t>(1, r.utilization.size());
            if (r.measured && speedup > 1.2 * double(devices)) {
                char b[320];
                std::snprintf(b, sizeof b,
                              "%s: %.2gx the speed of %s on %zu device%s is more than its devices can give: %s's "
                              "runs were slowed by something else (compare the fastest runs: %.3g ms against %.3g ms)",
                              r.name.c_str(), speedup, runs.front().name.c_str(), devices, devices == 1 ? "" : "s",
                              runs.front().name.c_str(), runs.front().minMs, r.minMs);
                notes.push_back(b);
            }
        }
    for (const ProfileRun &r : runs)
        if (r.measured && r.minMs > 0.0 && r.makespanMs > 1.5 * r.minMs && r.makespanMs - r.minMs > 0.05)
            notes.push_back(r.name + ": its median " + ms(r.makespanMs) + " is " +
                            std::to_string(int(r.makespanMs / r.minMs + 0.5)) + "x its fastest run (" +
                            ms(r.minMs) + "): the runs were slowed by something else, most often other "
                            "processes wanting the CPUs");
    if (othersBusy) {
        if (std::string note = contentionNote(*othersBusy, cores, ourThreads, "profiling"); !note.empty())
            notes.push_back(note);
    } else if (load && *load > double(cores) + 0.5) {
        char b[32];
        std::snprintf(b, sizeof b, "%.1f", *load);
        notes.push_back(std::string("the machine was busy while profiling (load average ") + b + " on " +
                        std::to_string(cores) + " cores): times include waiting for a core; profile on an "
                        "idle machine to compare schedules");
    }
    return notes;
}

} // namespace opscope::schedule

// CUPTI activity records → opscope's trace, without a GPU: the tests build the CUDA 13 record
// structs CUPTI hands over (CUpti_ActivityKernel10, Memcpy6, …) and check the lanes, the node each
// kernel and copy is tied to, the launch arrows, the clock mapping and the Chrome round trip. The
// live tracer is started too: without a device it must refuse with a message, never crash.

#include "cuptitrace.h"
#include "cuptitracer.h"
#include "ir/opcategory.h"
#include "trace/chrometrace.h"

#include <QtTest>

#include <cupti_activity.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include <algorithm>
#include <cstring>

using namespace opscope;
using gpu::ClockMap;

namespace {

constexpr std::uint64_t kBase = 1'700'000'000'000'000'000ull; // CUPTI ns are large

CUpti_ActivityAPI api(std::uint32_t cbid, std::uint32_t correlation, std::uint64_t start, std::uint64_t end)
{
    CUpti_ActivityAPI a{};
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = cbid;
    a.start = kBase + start;
    a.end = kBase + end;
    a.threadId = 7;
    a.correlationId = correlation;
    return a;
}

CUpti_ActivityExternalCorrelation external(std::uint32_t correlation, std::uint64_t id)
{
    CUpti_ActivityExternalCorrelation e{};
    e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    e.externalId = id;
    e.correlationId = correlation;
    return e;
}

CUpti_ActivityKernel10 kernel(const char *name, std::uint32_t correlation, std::uint32_t stream, std::uint64_t start,
                              std::uint64_t end)
{
    CUpti_ActivityKernel10 k;
    std::memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    k.correlationId = correlation;
    k.deviceId = 0;
    k.streamId = stream;
    k.start = kBase + start;
    k.end = end ? kBase + end : 0;
    k.gridX = 80, k.gridY = 1, k.gridZ = 1;
    k.blockX = 256, k.blockY = 1, k.blockZ = 1;
    k.registersPerThread = 40;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 1024;
    return k;
}

const trace::Lane *findLane(const trace::Trace &t, const std::string &device, const std::string &label)
{
    for (const trace::Lane &l : t.lanes)
        if (l.device == device && l.label == label)
            return &l;
    return nullptr;
}

std::string text(const trace::Trace &t, std::uint32_t id)
{
    return id == trace::kNoString ? std::string("<none>") : t.strings[id];
}

// One run's records, every kind the tracer enables, a few that must be skipped or counted.
trace::Trace recordedRun(gpu::CuptiCounts &counts, const ClockMap &clock)
{
    gpu::CuptiTraceBuilder b([](bool driver, std::uint32_t cbid) -> std::string {
        if (driver)
            return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ? "cuLaunchKernelEx" : "";
        return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000   ? "cudaLaunchKernel"
               : cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020 ? "cudaMemcpyAsync"
                                                                          : "";
    });
    // Buffers arrive in any order: a kernel before the call that launched it, ids after both.
    const auto relu = kernel("_Z10reluKernelPKfPfl", 1, 13, 5000, 9000);
    b.add(&relu);
    const auto launch = api(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, 1000, 3000);
    b.add(&launch);
    const auto copyCall = api(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 2, 4000, 4500);
    b.add(&copyCall);
    CUpti_ActivityMemcpy6 copy;
    std::memset(&copy, 0, sizeof copy);
    copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    copy.bytes = 4u << 20;
    copy.start = kBase + 9500;
    copy.end = kBase + 1'009'500; // 4 MiB in 1 ms
    copy.streamId = 13;
    copy.correlationId = 2;
    b.add(&copy);
    auto tail = copy; // one call, a copy done in two pieces: an arrow to each
    tail.bytes = 1024;
    tail.start = kBase + 1'009'600;
    tail.end = kBase + 1'009'700;
    b.add(&tail);
    const auto e1 = external(1, 1), e2 = external(2, 2);
    b.add(&e1);
    b.add(&e2);
    // A library's kernel launched through the driver inside node 1 (cuDNN's cuLaunchKernelEx).
    auto driverCall = api(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 7, 1100, 1500);
    driverCall.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    b.add(&driverCall);
    const auto e7 = external(7, 1);
    b.add(&e7);
    const auto cudnn = kernel("cudnn_conv_kernel", 7, 13, 4000, 4900);
    b.add(&cudnn);
    // No node pushed an id around these: unattributed, counted.
    CUpti_ActivityMemset4 set;
    std::memset(&set, 0, sizeof set);
    set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    set.bytes = 256;
    set.streamId = 14;
    set.start = kBase + 2000;
    set.end = kBase + 2100;
    set.correlationId = 3;
    b.add(&set);
    const auto stray = kernel("cub_scan", 4, 14, 3000, 3500);
    b.add(&stray);
    CUpti_ActivityMemcpyPtoP4 peer;
    std::memset(&peer, 0, sizeof peer);
    peer.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    peer.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    peer.bytes = 1024;
    peer.deviceId = 1;
    peer.streamId = 20;
    peer.srcDeviceId = 0;
    peer.dstDeviceId = 1;
    peer.start = kBase + 1'011'000;
    peer.end = kBase + 1'011'200;
    peer.correlationId = 5;
    b.add(&peer);
    CUpti_ActivitySynchronization2 sync{};
    sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    sync.streamId = 13;
    sync.start = kBase + 4600;
    sync.end = kBase + 1'010'000;
    b.add(&sync);
    // Skipped: a kernel CUPTI never saw finish (end 0), a kind this conversion does not show.
    const auto unfinished = kernel("late", 6, 13, 1'012'000, 0);
    b.add(&unfinished);
    CUpti_ActivityName name{};
    name.kind = CUPTI_ACTIVITY_KIND_NAME;
    b.add(&name);
    // No timing at all (CUPTI_TIMESTAMP_UNKNOWN: 0/0): on CUPTI's epoch clock a span decades early.
    CUpti_ActivityAPI untimed{};
    untimed.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    untimed.correlationId = 8;
    untimed.threadId = 7;
    b.add(&untimed);
    // A context synchronization: no stream (CUPTI_SYNCHRONIZATION_INVALID_VALUE).
    CUpti_ActivitySynchronization2 contextSync{};
    contextSync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    contextSync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    contextSync.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    contextSync.start = kBase + 1'020'000;
    contextSync.end = kBase + 1'021'000;
    b.add(&contextSync);
    // Programmatic dependent launch: the next kernel on stream 14 starts 200 ns before the last
    // ends; it keeps its real times on a further lane of the stream.
    const auto early = kernel("pdl_next", 9, 14, 3300, 3600);
    b.add(&early);
    b.addDropped(5);

    trace::Trace t;
    t.name = "run on cuda:0";
    const std::vector<gpu::LaunchedNode> nodes{{"relu1", "Relu", ""}, {"out_copy", "Identity", ""}};
    counts = b.appendTo(t, clock, nodes);
    return t;
}

} // namespace

class TestCuptiTrace : public QObject
{
    Q_OBJECT
private slots:
    void clockFit_data()
    {
        QTest::addColumn<double>("drift"); // host seconds per CUPTI second − 1
        QTest::newRow("no drift") << 0.0;
        QTest::newRow("host clock 50 ppm fast") << 50e-6;
        QTest::newRow("host clock 20 ppm slow") << -20e-6;
    }

    void clockFit()
    {
        QFETCH(double, drift);
        // The CUPTI clock reads kBase at trace time 0.25 s; pairs at start and after 2 s.
        const auto hostAt = [&](std::uint64_t ns) { return 0.25 + double(ns - kBase) * 1e-9 * (1.0 + drift); };
        const ClockMap m = gpu::fitClock({{kBase, hostAt(kBase)}, {kBase + 2'000'000'000, hostAt(kBase + 2'000'000'000)}});
        for (std::uint64_t at : {std::uint64_t(0), std::uint64_t(1'000'000'000), std::uint64_t(1'999'999'000)})
            QVERIFY2(std::abs(m.toSeconds(kBase + at) - hostAt(kBase + at)) < 1e-9,
                     qPrintable(QString::number(m.toSeconds(kBase + at) - hostAt(kBase + at))));
        // Without drift correction a 50 ppm drift is 100 µs off after 2 s: the issue's bound is 10 µs.
    }

    void clockFitEdges()
    {
        // One pair: the offset, 1 ns per ns.
        ClockMap one = gpu::fitClock({{kBase, 3.0}});
        QCOMPARE(one.slope, 1e-9);
        QVERIFY(std::abs(one.toSeconds(kBase + 1000) - (3.0 + 1e-6)) < 1e-9);
        // A pair read wrongly (3x apart) is not drift: the slope stays, the offset is the mean.
        ClockMap bad = gpu::fitClock({{kBase, 0.0}, {kBase + 1'000'000'000, 3.0}});
        QCOMPARE(bad.slope, 1e-9);
        // Two pairs microseconds apart say nothing about the slope either.
        ClockMap close = gpu::fitClock({{kBase, 1.0}, {kBase + 2000, 1.000003}});
        QCOMPARE(close.slope, 1e-9);
        QCOMPARE(gpu::fitClock({}).slope, 1e-9);
    }

    void lanesNodesAndLaunches()
    {
        gpu::CuptiCounts counts;
        const ClockMap clock = gpu::fitClock({{kBase, 0.5}});
        const trace::Trace t = recordedRun(counts, clock);

        QCOMPARE(counts.kernels, std::uint64_t(5));
        QCOMPARE(counts.untimed, std::uint64_t(2)); // the unfinished kernel, the 0/0 call: not drawn
        QCOMPARE(counts.copies, std::uint64_t(3));
        QCOMPARE(counts.memsets, std::uint64_t(1));
        QCOMPARE(counts.apiCalls, std::uint64_t(4));
        QCOMPARE(counts.syncs, std::uint64_t(2));
        QCOMPARE(counts.unattributed, std::uint64_t(4)); // memset, stray and PDL kernels, peer copy
        QCOMPARE(counts.dropped, std::uint64_t(5));
        QCOMPARE(counts.otherRecords, std::uint64_t(1));

        // A lane per device and stream; host lanes per thread (calls) and per stream (waits).
        const trace::Lane *s13 = findLane(t, "cuda:0", "stream 13");
        QVERIFY(s13);
        QCOMPARE(s13->spans.size(), std::size_t(4));
        // The driver-launched library kernel is its node's too.
        QCOMPARE(text(t, s13->spans[0].name), std::string("relu1"));
        QCOMPARE(text(t, s13->spans[0].detail).substr(0, 17), std::string("cudnn_conv_kernel"));
        const trace::Span &k = s13->spans[1];
        QCOMPARE(text(t, k.name), std::string("relu1"));
        QCOMPARE(text(t, k.op), std::string("Relu"));
        QCOMPARE(k.category, std::uint8_t(OpCategory::Activation));
        QCOMPARE(text(t, k.detail), std::string("reluKernel(float const*, float*, long); grid [80,1,1] block "
                                                "[256,1,1], 40 registers, 2.0 KiB shared"));
        QVERIFY(std::abs(k.start - (0.5 + 5e-6)) < 1e-12 && std::abs(k.end - (0.5 + 9e-6)) < 1e-12);
        const trace::Span &c = s13->spans[2];
        QCOMPARE(text(t, c.name), std::string("out_copy"));
        QCOMPARE(text(t, c.op), std::string("Memcpy DtoH"));
        QCOMPARE(c.category, std::uint8_t(OpCategory::Communication));
        QCOMPARE(text(t, c.detail), std::string("DtoH 4.0 MiB, 4.2 GB/s"));

        const trace::Lane *s14 = findLane(t, "cuda:0", "stream 14");
        QVERIFY(s14);
        QCOMPARE(s14->spans.size(), std::size_t(2));
        QCOMPARE(text(t, s14->spans[0].op), std::string("Memset"));
        QCOMPARE(text(t, s14->spans[1].name), std::string("cub_scan")); // its kernel's name, no node
        QCOMPARE(s14->spans[1].category, std::uint8_t(OpCategory::Other));
        const trace::Lane *pdl = findLane(t, "cuda:0", "stream 14 (overlapping 1)");
        QVERIFY(pdl);
        QCOMPARE(text(t, pdl->spans[0].name), std::string("pdl_next"));
        QVERIFY(std::abs(pdl->spans[0].start - (0.5 + 3.3e-6)) < 1e-12); // its own start, not clamped
        QVERIFY(findLane(t, "host", "CUDA sync (context, events)"));
        // No span before the run: the 0/0 record is left out, not placed decades early.
        for (const trace::Lane &l : t.lanes)
            for (const trace::Span &sp : l.spans)
                QVERIFY(sp.start >= 0.5);
        // Queue numbers count up per device, whatever the thread and stream ids.
        for (const trace::Lane &l : t.lanes)
            QVERIFY2(l.queue >= 1000 && l.queue < 1010, l.label.c_str());

        const trace::Lane *peer = findLane(t, "cuda:1", "stream 20");
        QVERIFY(peer);
        QCOMPARE(text(t, peer->spans[0].detail), std::string("PtoP 1.0 KiB from cuda:0 to cuda:1, 5.1 GB/s"));

        const trace::Lane *calls = findLane(t, "host", "CUDA API (thread 7)");
        QVERIFY(calls);
        QCOMPARE(calls->spans.size(), std::size_t(2));
        QCOMPARE(text(t, calls->spans[0].name), std::string("cudaLaunchKernel"));
        QCOMPARE(calls->spans[0].category, trace::kIdleCategory); // host calls are not device work
        QVERIFY(trace::isHostLane(calls->device));
        const trace::Lane *driverCalls = findLane(t, "host", "CUDA driver (thread 7)");
        QVERIFY(driverCalls);
        QCOMPARE(text(t, driverCalls->spans[0].name), std::string("cuLaunchKernelEx"));
        const trace::Lane *waits = findLane(t, "host", "CUDA sync (stream 13)");
        QVERIFY(waits);
        QCOMPARE(text(t, waits->spans[0].name), std::string("stream synchronize"));

        // Every lane sorted and non-overlapping, as the timeline's level-of-detail query needs.
        for (const trace::Lane &l : t.lanes)
            for (std::size_t i = 1; i < l.spans.size(); ++i)
                QVERIFY(l.spans[i].start >= l.spans[i - 1].end);

        // A launch arrow from each call to the work it started (correlation ids), none for the
        // work no recorded call started.
        QCOMPARE(t.launches.size(), std::size_t(4));
        const trace::Launch &first = t.launches[0];
        QCOMPARE(&t.lanes[first.fromLane], calls);
        QCOMPARE(&t.lanes[first.toLane], s13);
        QVERIFY(std::abs(first.start - (0.5 + 1e-6)) < 1e-12 && std::abs(first.end - (0.5 + 5e-6)) < 1e-12);
        QCOMPARE(&t.lanes[t.launches[1].fromLane], driverCalls);
        QVERIFY(std::any_of(t.launches.begin(), t.launches.end(),
                            [](const trace::Launch &x) { return std::abs(x.end - (0.5 + 9.5e-6)) < 1e-12; }));
        QVERIFY(std::any_of(t.launches.begin(), t.launches.end(),
                            [](const trace::Launch &x) { return std::abs(x.end - (0.5 + 1009.6e-6)) < 1e-12; }));
        QVERIFY(t.transfers.empty()); // launches are not data moving between lanes
    }

    // Perfetto and opscope's own reader see the same lanes, names, details and arrows.
    void chromeRoundTrip()
    {
        gpu::CuptiCounts counts;
        const trace::Trace t = recordedRun(counts, gpu::fitClock({{kBase, 0.0}}));
        const std::string json = trace::toChromeJson(t);
        QVERIFY(json.find("\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1001,\"args\":{\"name\":\"stream 13\"}") !=
                std::string::npos);
        Expected<trace::Trace> back = trace::fromChromeJson(json);
        QVERIFY2(back, back ? "" : back.status().message().c_str());
        QCOMPARE(back->lanes.size(), t.lanes.size());
        const trace::Lane *s13 = findLane(*back, "cuda:0", "stream 13");
        QVERIFY(s13);
        QCOMPARE(text(*back, s13->spans[0].name), std::string("relu1"));
        QVERIFY(text(*back, s13->spans[1].detail).starts_with("reluKernel(float const*, float*, long); grid"));
        QVERIFY(findLane(*back, "host", "CUDA API (thread 7)"));
        QCOMPARE(back->launches.size(), std::size_t(4));
        QVERIFY(back->transfers.empty());
        // Lanes without a name of their own stay "queue N" both ways.
        trace::Trace plain;
        plain.lanes.push_back({"cpu:0", 0, {{0.0, 1e-3, plain.intern("a"), plain.intern("Relu"), 1}}, {}});
        Expected<trace::Trace> again = trace::fromChromeJson(trace::toChromeJson(plain));
        QVERIFY(again);
        QVERIFY(again->lanes[0].label.empty());
    }

    // Kineto (PyTorch profiler) marks CPU op → GPU kernel flows "ac2g": launches, not transfers.
    void kinetoLaunchFlows()
    {
        const std::string json = R"({"traceEvents":[
            {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":7,"ts":10,"dur":5},
            {"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel","pid":0,"tid":7,"ts":20,"dur":30},
            {"ph":"s","cat":"ac2g","name":"ac2g","id":42,"pid":100,"tid":7,"ts":10},
            {"ph":"f","cat":"ac2g","name":"ac2g","id":42,"pid":0,"tid":7,"ts":20,"bp":"e"},
            {"ph":"M","name":"thread_name","pid":0,"tid":7,"args":{"name":"stream 7"}}]})";
        Expected<trace::Trace> t = trace::fromChromeJson(json);
        QVERIFY2(t, t ? "" : t.status().message().c_str());
        QCOMPARE(t->launches.size(), std::size_t(1));
        QVERIFY(t->transfers.empty());
        bool named = false;
        for (const trace::Lane &l : t->lanes)
            named = named || l.label == "stream 7";
        QVERIFY(named);
    }

    // On a machine without a GPU (or without CUPTI) the tracer refuses with a message; where it
    // starts, finishing it with nothing launched gives an empty GPU part.
    void liveTracerStartsOrSaysWhy()
    {
        Expected<std::unique_ptr<gpu::CuptiTracer>> tracer = gpu::CuptiTracer::start();
        if (!tracer) {
            qInfo("CUPTI did not start: %s", tracer.status().message().c_str());
            QVERIFY(!tracer.status().message().empty());
            QVERIFY(gpu::CuptiTracer::active() == nullptr);
            return;
        }
        QCOMPARE(gpu::CuptiTracer::active(), tracer->get());
        // A second one in the same process is refused (CUPTI's collection is global).
        Expected<std::unique_ptr<gpu::CuptiTracer>> second = gpu::CuptiTracer::start();
        QVERIFY(!second);
        trace::Trace t;
        Expected<gpu::CuptiCounts> counts = (*tracer)->finish(t, std::chrono::steady_clock::now());
        QVERIFY(gpu::CuptiTracer::active() == nullptr);
        if (counts)
            QCOMPARE(counts->unattributed, std::uint64_t(0));
    }
};

QTEST_GUILESS_MAIN(TestCuptiTrace)
#include "tst_cuptitrace.moc"

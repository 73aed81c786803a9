// opscope's own layered layout (the fallback when dot runs out of time) and the byte encoding the
// layout helper process speaks. The layout is checked for what a reader of the graph relies on —
// edges run downward, nothing overlaps, paths end at their items — on graph shapes that are slow
// for dot (long skip edges, wide fan-outs, cycles from collapsed groups) and on every bundled model.

#include "layout/edgelabels.h"
#include "layout/layered.h"
#include "layout/layoutio.h"
#include "layout/presentation.h"
#include "testsupport.h"

#include <QTest>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

using namespace opscope;
using namespace opscope::layout;

namespace {

LayoutRequest chain(std::size_t n)
{
    LayoutRequest r;
    r.nodes.assign(n, {120, 36});
    for (std::size_t i = 0; i + 1 < n; ++i)
        r.edges.push_back({i, i + 1});
    return r;
}

// A U-Net: a long chain down and up with a skip edge from each encoder level to its decoder level.
LayoutRequest unet(std::size_t depth, std::size_t perLevel)
{
    LayoutRequest r = chain(2 * depth * perLevel);
    const std::size_t n = r.nodes.size();
    for (std::size_t d = 0; d < depth; ++d)
        r.edges.push_back({(d + 1) * perLevel - 1, n - d * perLevel - 1});
    return r;
}

// Random DAG with wide layers, multi-edges and side inputs (weights) of a different size.
LayoutRequest randomDag(std::size_t n, unsigned seed)
{
    std::mt19937 rng(seed);
    LayoutRequest r;
    for (std::size_t i = 0; i < n; ++i)
        r.nodes.push_back({double(40 + rng() % 200), double(24 + rng() % 30)});
    for (std::size_t i = 1; i < n; ++i) {
        const std::size_t fanIn = 1 + rng() % 3;
        for (std::size_t k = 0; k < fanIn; ++k)
            r.edges.push_back({rng() % i, i});
    }
    return r;
}

bool finite(const Point &p)
{
    return std::isfinite(p.x) && std::isfinite(p.y);
}

// What a reader relies on; returns an empty string or what is wrong.
QString checkReadable(const LayoutRequest &q, const LayoutResult &r, bool acyclic)
{
    if (r.centers.size() != q.nodes.size() || r.edges.size() != q.edges.size())
        return QStringLiteral("sizes");
    for (std::size_t i = 0; i < q.nodes.size(); ++i) {
        const Point c = r.centers[i];
        if (!finite(c) || c.x - q.nodes[i].width / 2 < -1e-6 || c.x + q.nodes[i].width / 2 > r.width + 1e-6 ||
            c.y - q.nodes[i].height / 2 < -1e-6 || c.y + q.nodes[i].height / 2 > r.height + 1e-6)
            return QStringLiteral("node %1 outside the bounding box").arg(i);
    }
    // No two items overlap (items on one row share a centre y).
    std::vector<std::size_t> order(q.nodes.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::pair(r.centers[a].y, r.centers[a].x) < std::pair(r.centers[b].y, r.centers[b].x);
    });
    for (std::size_t k = 1; k < order.size(); ++k) {
        const std::size_t a = order[k - 1], b = order[k];
        if (r.centers[a].y == r.centers[b].y &&
            r.centers[b].x - r.centers[a].x < (q.nodes[a].width + q.nodes[b].width) / 2 - 1e-6)
            return QStringLiteral("nodes %1 and %2 overlap").arg(a).arg(b);
    }
    for (std::size_t i = 0; i < q.edges.size(); ++i) {
        const auto &e = q.edges[i];
        const auto &path = r.edges[i];
        if (e.from == e.to) {
            if (!path.empty())
                return QStringLiteral("self loop %1 drawn").arg(i);
            continue;
        }
        if (path.size() < 4 || (path.size() - 1) % 3 != 0)
            return QStringLiteral("edge %1 is not a Bézier path (%2 points)").arg(i).arg(path.size());
        for (const Point &p : path)
            if (!finite(p))
                return QStringLiteral("edge %1 has a non-finite point").arg(i);
        const Point from = r.centers[e.from], to = r.centers[e.to];
        if (std::abs(path.front().x - from.x) > 1e-6 || std::abs(path.back().x - to.x) > 1e-6)
            return QStringLiteral("edge %1 does not start and end at its items").arg(i);
        if (acyclic && !(from.y < to.y))
            return QStringLiteral("edge %1 runs upward").arg(i);
    }
    return {};
}

} // namespace

class TestLayered : public QObject
{
    Q_OBJECT

private slots:
    void readableOnHardShapes_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("size");
        QTest::newRow("chain 1") << 0 << 1;
        QTest::newRow("chain 50") << 0 << 50;
        QTest::newRow("unet 6x20 (long skips)") << 1 << 20;
        QTest::newRow("unet 8x250 (4,000 items)") << 1 << 250;
        QTest::newRow("random dag 300") << 2 << 300;
        QTest::newRow("random dag 5000") << 2 << 5000;
        QTest::newRow("fan-out 400") << 3 << 400;
        QTest::newRow("isolated items") << 4 << 30;
    }

    void readableOnHardShapes()
    {
        QFETCH(int, kind);
        QFETCH(int, size);
        LayoutRequest q;
        switch (kind) {
        case 0: q = chain(std::size_t(size)); break;
        case 1: q = unet(size == 20 ? 6 : 8, std::size_t(size)); break;
        case 2: q = randomDag(std::size_t(size), 7); break;
        case 3:
            q.nodes.assign(std::size_t(size) + 2, {60, 30});
            for (std::size_t i = 1; i <= std::size_t(size); ++i) {
                q.edges.push_back({0, i});
                q.edges.push_back({i, std::size_t(size) + 1});
            }
            break;
        default: q.nodes.assign(std::size_t(size), {50, 20}); break;
        }
        const LayoutResult r = layoutLayered(q);
        const QString problem = checkReadable(q, r, true);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    void cyclesAndBadEdgesDoNotBreakIt()
    {
        // Collapsed groups can read each other (A→B→A); self loops and out-of-range edges happen
        // only through bugs, but must not crash the fallback.
        LayoutRequest q = chain(6);
        q.edges.push_back({5, 0});
        q.edges.push_back({3, 3});
        q.edges.push_back({2, 99});
        q.edges.push_back({0, 1}); // a second edge between the same items shares the path
        const LayoutResult r = layoutLayered(q);
        QVERIFY(r.edges[q.edges.size() - 2].empty());
        QCOMPARE(r.edges.back(), r.edges.front());
        q.edges.erase(q.edges.end() - 2); // checkReadable skips nothing else
        QVERIFY(checkReadable(q, layoutLayered(q), false).isEmpty());
    }

    void skipEdgesNeverPassThroughAnItem()
    {
        // In a U-Net the skip edges are what dot is slow on; in the quick layout they run beside
        // the chain: no point where an edge crosses a row lies inside that row's item.
        const LayoutRequest q = unet(5, 12);
        const LayoutResult r = layoutLayered(q);
        std::map<double, std::size_t> rowItem; // one chain item per row
        for (std::size_t i = 0; i < q.nodes.size(); ++i)
            rowItem[r.centers[i].y] = i;
        for (std::size_t i = q.nodes.size() - 1; i < q.edges.size(); ++i) {
            const auto &path = r.edges[i];
            for (std::size_t k = 3; k + 1 < path.size(); k += 3) { // the points between segments
                const auto it = rowItem.find(path[k].y);
                QVERIFY(it != rowItem.end());
                QVERIFY2(std::abs(path[k].x - r.centers[it->second].x) >= q.nodes[it->second].width / 2,
                         "a skip edge runs through an item");
            }
        }
    }

    void weightsSitNextToTheirReader()
    {
        // A source (a weight, an input) is placed one row above its first reader, not at the top.
        LayoutRequest q = chain(20);
        q.nodes.push_back({80, 20});
        q.edges.push_back({20, 15});
        const LayoutResult r = layoutLayered(q);
        QVERIFY(r.centers[20].y > r.centers[13].y);
        QVERIFY(r.centers[20].y < r.centers[15].y);
    }

    void edgeLabelsCoverNothing_data()
    {
        QTest::addColumn<bool>("dot");
        QTest::addColumn<int>("shape");
        QTest::addColumn<double>("placedAtLeast"); // share of labels that find a free spot
        const char *shapes[] = {"topk-2", "fanout-8", "fanout-16", "random-300", "unet"};
        for (bool dot : {false, true})
            for (int s = 0; s < 5; ++s)
                QTest::addRow("%s/%s", dot ? "dot" : "layered", shapes[s])
                    << dot << s << (s == 0 ? 1.0 : s == 1 ? 0.85 : 0.5);
    }

    void edgeLabelsCoverNothing()
    {
        // Labels slide along their edges so that none covers another or an item; where edges fan
        // out of one node their midpoints are side by side and labels drawn there would pile up.
        QFETCH(bool, dot);
        QFETCH(int, shape);
        QFETCH(double, placedAtLeast);
        LayoutRequest q;
        auto fanOut = [&](std::size_t readers) {
            q.nodes.assign(readers + 2, {90, 36});
            for (std::size_t i = 0; i < readers; ++i) {
                q.edges.push_back({0, 1 + i});
                q.edges.push_back({1 + i, readers + 1});
            }
        };
        switch (shape) {
        case 0: fanOut(2); break;
        case 1: fanOut(8); break;
        case 2: fanOut(16); break;
        case 3: q = randomDag(300, 7); break;
        default: q = unet(4, 5); break;
        }
        LayoutResult r;
        if (dot) {
            auto laid = layoutWithGraphviz(q);
            QVERIFY2(laid, laid ? "" : laid.status().message().c_str());
            r = std::move(*laid);
        } else {
            r = layoutLayered(q);
        }
        std::vector<Box> items;
        for (std::size_t i = 0; i < q.nodes.size(); ++i)
            items.push_back({r.centers[i].x - q.nodes[i].width / 2, r.centers[i].y - q.nodes[i].height / 2,
                             r.centers[i].x + q.nodes[i].width / 2, r.centers[i].y + q.nodes[i].height / 2});
        const std::vector<Point> sizes(q.edges.size(), Point{112, 11}); // "float32[1,64,56,56]" at 7 pt
        const std::vector<std::optional<Box>> labels = placeEdgeLabels(r.edges, sizes, items);
        QCOMPARE(labels.size(), q.edges.size());
        std::size_t placed = 0;
        for (std::size_t a = 0; a < labels.size(); ++a) {
            if (!labels[a])
                continue;
            ++placed;
            const Box &box = *labels[a];
            QCOMPARE(box.x1 - box.x0, 112.0);
            // Apart, with a gap that keeps two labels on one line from reading as one string.
            const Box spaced{box.x0 - 7.5, box.y0, box.x1 + 7.5, box.y1};
            for (std::size_t b = a + 1; b < labels.size(); ++b)
                QVERIFY2(!labels[b] || !spaced.overlaps(*labels[b]), qPrintable(QStringLiteral("labels %1, %2").arg(a).arg(b)));
            for (const Box &item : items)
                QVERIFY(!box.overlaps(item));
            // Beside its own edge: the label's inner side is a few points from the curve.
            double nearest = 1e300;
            const auto &path = r.edges[a];
            for (std::size_t i = 0; i + 3 < path.size(); i += 3)
                for (int k = 0; k <= 1024; ++k) {
                    const double t = k / 1024.0, u = 1 - t;
                    const double x = u * u * u * path[i].x + 3 * u * u * t * path[i + 1].x +
                                     3 * u * t * t * path[i + 2].x + t * t * t * path[i + 3].x;
                    const double y = u * u * u * path[i].y + 3 * u * u * t * path[i + 1].y +
                                     3 * u * t * t * path[i + 2].y + t * t * t * path[i + 3].y;
                    const double dx = std::max({box.x0 - x, 0.0, x - box.x1});
                    const double dy = std::max({box.y0 - y, 0.0, y - box.y1});
                    nearest = std::min(nearest, std::hypot(dx, dy));
                }
            QVERIFY2(nearest < 5.0, qPrintable(QStringLiteral("label %1 is %2 pt from its edge").arg(a).arg(nearest)));
        }
        QVERIFY2(placed >= placedAtLeast * labels.size(),
                 qPrintable(QStringLiteral("%1 of %2 labels placed").arg(placed).arg(labels.size())));
    }

    void placesEveryBundledModel_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("inception") << QStringLiteral("inception_block.onnx");
        QTest::newRow("transformer") << QStringLiteral("transformer_block.onnx");
    }

    void placesEveryBundledModel()
    {
        QFETCH(QString, file);
        const Model m = test::loadOrFail(test::samplePath(file.toStdString())).model;
        const Grouping grouping = Grouping::build({&m.graph});
        const Presentation p = present({&m.graph}, grouping, grouping.initialExpansion(1000));
        const LayoutRequest q = layoutRequest(p, [](const VisualItem &) { return Point{140, 40}; });
        const QString problem = checkReadable(q, layoutLayered(q), true);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    void codecRoundTrips()
    {
        LayoutRequest q = randomDag(200, 3);
        q.fast = true;
        Expected<LayoutRequest> back = decodeRequest(encodeRequest(q));
        QVERIFY(back);
        QCOMPARE(back->fast, true);
        QCOMPARE(back->nodes.size(), q.nodes.size());
        QCOMPARE(back->nodes[17].width, q.nodes[17].width);
        QCOMPARE(back->edges.size(), q.edges.size());
        QCOMPARE(back->edges[42].from, q.edges[42].from);
        const LayoutResult r = layoutLayered(q);
        Expected<LayoutResult> rb = decodeResult(encodeResult(r), q);
        QVERIFY(rb);
        QCOMPARE(rb->edges, r.edges);
        QCOMPARE(rb->centers.size(), r.centers.size());
        QCOMPARE(requestDigest(q), requestDigest(*back));
        q.nodes[3].width += 1;
        QVERIFY(requestDigest(q) != requestDigest(*back));
    }

    void codecRejectsEveryTruncationAndCorruption()
    {
        // The helper may die half-way through writing: every prefix is an error, never a crash
        // or a half-filled layout.
        const LayoutRequest q = randomDag(12, 5);
        const std::string request = encodeRequest(q);
        const std::string result = encodeResult(layoutLayered(q));
        for (std::size_t n = 0; n < request.size(); ++n)
            QVERIFY(!decodeRequest(std::string_view(request).substr(0, n)));
        for (std::size_t n = 0; n < result.size(); ++n)
            QVERIFY(!decodeResult(std::string_view(result).substr(0, n), q));
        QVERIFY(!decodeResult(result + "x", q));
        QVERIFY(!decodeResult(result, chain(3))); // answers another request
        std::string huge = request;
        huge[16] = '\xff'; // node count's low byte: claims more nodes than the bytes hold
        QVERIFY(!decodeRequest(huge));
        std::string nan = result;
        const double bad = std::nan("");
        std::memcpy(nan.data() + 8, &bad, sizeof bad);
        QVERIFY(!decodeResult(nan, q));
    }
};

QTEST_APPLESS_MAIN(TestLayered)
#include "tst_layered.moc"

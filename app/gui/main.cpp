// opscope: the desktop app. `opscope [MODEL]` opens a model (a bundled sample without one).
// --screenshot FILE renders the window once it is idle and exits (docs/ screenshots, CI checks).

#include "categorycolors.h"
#include "graphpane.h"
#include "mainwindow.h"
#include "passpanel.h"
#include "passes/registry.h"
#include "profilepanel.h"
#include "runtime/randominputs.h"
#include "memoryview.h"
#include "valuespanel.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <cstdio>
#include <QTimer>

#ifndef OPSCOPE_VERSION
#define OPSCOPE_VERSION "0.0.0"
#endif

namespace {

struct Options
{
    QCommandLineOption screenshot{QStringLiteral("screenshot"), QStringLiteral("Save a PNG of the window and exit"),
                                  QStringLiteral("file")};
    QCommandLineOption run{QStringLiteral("run"), QStringLiteral("Run the pass pipeline after loading")};
    QCommandLineOption step{QStringLiteral("step"), QStringLiteral("Run the pass pipeline and show this pass (by name)"),
                            QStringLiteral("pass")};
    QCommandLineOption select{QStringLiteral("select"), QStringLiteral("Select and inspect this node"),
                              QStringLiteral("node")};
    QCommandLineOption overlay{QStringLiteral("overlay"),
                               QStringLiteral("With --compare or --step: BEFORE and AFTER in one view, not side by side")};
    QCommandLineOption compare{QStringLiteral("compare"), QStringLiteral("Compare with another model"),
                               QStringLiteral("model")};
    QCommandLineOption profile{QStringLiteral("profile"),
                               QStringLiteral("Profile serial, parallel and greedy on N CPU devices after loading"),
                               QStringLiteral("devices")};
    QCommandLineOption trace{QStringLiteral("trace"),
                             QStringLiteral("Open a Chrome trace in the timeline (profile --trace, a saved session)"),
                             QStringLiteral("file")};
    QCommandLineOption partition{QStringLiteral("partition"),
                                 QStringLiteral("Show the graph partitioned for N CPU devices"), QStringLiteral("devices")};
    QCommandLineOption level{QStringLiteral("level"), QStringLiteral("Pass level for --run: basic, extended (the default here, for reading the graph; opscope-cli optimizes at all), layout or all"),
                             QStringLiteral("level")};
    QCommandLineOption enter{QStringLiteral("enter"), QStringLiteral("Walk into this node's first body (If/Loop/Scan)"),
                             QStringLiteral("node")};
    QCommandLineOption values{QStringLiteral("values"), QStringLiteral("Show the inspector's Values tab (with --select)")};
    QCommandLineOption memory{QStringLiteral("memory"), QStringLiteral("Plan the memory of the model (or --step) shown")};
    QCommandLineOption memoryAsRun{QStringLiteral("memory-as-run"),
                                   QStringLiteral("Plan the memory of the model optimized as run runs it (level all)")};
    QCommandLineOption dim{QStringLiteral("dim"), QStringLiteral("Size of a symbolic dim for --memory, --activations and --profile (repeatable)"),
                           QStringLiteral("name=value")};
    QCommandLineOption activations{QStringLiteral("activations"),
                                   QStringLiteral("Run once for the selected node's inputs and outputs (with --select)")};
    QCommandLineOption size{QStringLiteral("size"), QStringLiteral("Window size WxH"), QStringLiteral("size"),
                            QStringLiteral("1600x1000")};
    QCommandLineOption dark{QStringLiteral("dark"),
                            QStringLiteral("Dark colours (the desktop's dark theme is followed without it)")};

    void addTo(QCommandLineParser &parser) const
    {
        parser.setApplicationDescription(QStringLiteral("See every optimization pass as a visual diff."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addPositionalArgument(QStringLiteral("model"), QStringLiteral("ONNX model to open"));
        parser.addOptions({screenshot, run, step, select, compare, overlay, profile, trace, partition, level, enter, values, activations, memory, memoryAsRun,
                           dim, size, dark});
    }
};

void describe(QCoreApplication &app)
{
    app.setApplicationName(QStringLiteral("opscope"));
    app.setOrganizationName(QStringLiteral("opscope"));
    app.setApplicationVersion(QStringLiteral(OPSCOPE_VERSION));
}

// --help and --version answer without a display (man pages are made from them on build machines,
// and a user on an ssh session without X must not get "could not connect to display" and abort).
bool wantsTextOnly(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "-h" || a == "--help" || a == "--help-all" || a == "-v" || a == "--version" || a == "-?")
            return true;
        if (a == "--")
            break;
    }
    return false;
}

} // namespace

int main(int argc, char **argv)
{
    const Options o;
    if (wantsTextOnly(argc, argv)) {
        QCoreApplication text(argc, argv);
        describe(text);
        QCommandLineParser parser;
        o.addTo(parser);
        parser.process(text); // prints and exits
        return 0;
    }
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
        qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        // Qt would abort with "could not connect to display": say what to do instead.
        std::fprintf(stderr, "opscope: no display (neither DISPLAY nor WAYLAND_DISPLAY is set). Run it in a desktop "
                             "session, with QT_QPA_PLATFORM=offscreen for --screenshot, or use opscope-cli.\n");
        return 1;
    }
    QApplication app(argc, argv);
    describe(app);
    QApplication::setDesktopFileName(QStringLiteral("io.opscope.opscope")); // Wayland: icon, grouping
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/opscope.svg")));
    QCommandLineParser parser;
    o.addTo(parser);
    parser.process(app);
    const QCommandLineOption &screenshot = o.screenshot, &run = o.run, &step = o.step, &select = o.select,
                             &compare = o.compare, &profile = o.profile, &partition = o.partition,
                             &level = o.level, &enter = o.enter, &values = o.values, &size = o.size;

    if (parser.isSet(o.dark)) {
        QApplication::setStyle(QStringLiteral("Fusion"));
        QApplication::setPalette(opscope::darkPalette());
    }
    // Screenshots start from the default layout, not from a user's saved window state.
    if (parser.isSet(screenshot))
        QApplication::setOrganizationName(QStringLiteral("opscope-screenshots"));
    opscope::MainWindow window;
    const QStringList wh = parser.value(size).split(QLatin1Char('x'));
    if (parser.isSet(screenshot) && wh.size() == 2)
        window.resize(wh[0].toInt(), wh[1].toInt());
    window.show();
    // A script's mistakes are errors with a message, not a silent default (exit 1).
    auto fail = [](const QString &message) {
        std::fprintf(stderr, "opscope: %s\n", qPrintable(message));
        return 1;
    };
    if (parser.isSet(level)) {
        QStringList levels;
        for (const std::string &l : opscope::passes::levelNames())
            levels << QString::fromStdString(l);
        if (!levels.contains(parser.value(level)))
            return fail(QStringLiteral("unknown level '%1' (one of %2)").arg(parser.value(level), levels.join(QStringLiteral(", "))));
        window.passPanel()->setLevel(parser.value(level));
    }
    if (parser.isSet(o.overlay))
        window.passPanel()->setOverlay(true);
    const QStringList args = parser.positionalArguments();
    std::map<std::string, std::int64_t> dims;
    for (const QString &d : parser.values(o.dim)) {
        const qsizetype eq = d.lastIndexOf(QLatin1Char('='));
        bool ok = false;
        const qlonglong value = eq > 0 ? d.mid(eq + 1).toLongLong(&ok) : 0;
        if (!ok || value < 1) {
            std::fprintf(stderr, "opscope: --dim needs NAME=VALUE with VALUE >= 1, got '%s'\n", qPrintable(d));
            return 1;
        }
        dims[d.left(eq).toStdString()] = value;
    }
    window.memoryPanel()->presetDims(dims);
    if (args.isEmpty())
        window.openBundledSample();
    else
        window.openFile(args.front());
    if (parser.isSet(o.trace))
        if (const opscope::Status s = window.openTrace(parser.value(o.trace)); !s)
            return fail(QStringLiteral("--trace: %1").arg(QString::fromStdString(s.message())));

    if (parser.isSet(screenshot)) {
        // A script of stages, each run when the window is idle.
        auto stage = std::make_shared<int>(0);
        auto probed = std::make_shared<bool>(false);
        auto planned = std::make_shared<bool>(false);
        const QString out = parser.value(screenshot);
        auto advance = [&, stage, probed, planned, out] {
            // Two idle signals can arrive back to back (a layout answered from the cache): a stage
            // runs only while nothing is in flight, so the grab never catches a half-built step.
            if (window.isBusy())
                return;
            switch ((*stage)++) {
            case 0:
                // --dim names a symbolic dim of the model's inputs, as in the CLI (a typo would
                // silently plan with the dim at 1).
                if (const auto model = window.model(); model) {
                    if (const opscope::Status known = opscope::checkDimNames(dims, model->graph); !known) {
                        std::fprintf(stderr, "opscope: %s\n", known.message().c_str());
                        QApplication::exit(1);
                        return;
                    }
                }
                if (parser.isSet(compare)) {
                    window.compareWith(parser.value(compare));
                    return;
                }
                if (parser.isSet(profile)) {
                    opscope::schedule::ProfileOptions po;
                    po.devices = parser.value(profile).toInt();
                    po.iterations = 5;
                    po.allCoresSerial = false; // only the runs asked for
                    po.dims = dims;
                    window.profilePanel()->profile(window.model(), po);
                    return;
                }
                if (parser.isSet(partition)) {
                    window.partitionForDevices(parser.value(partition).toInt());
                    return;
                }
                if (parser.isSet(run) || parser.isSet(step)) { // --step implies --run (it was ignored)
                    window.runPipeline();
                    return;
                }
                [[fallthrough]];
            case 1:
                if (parser.isSet(step) && window.pipelineResult()) {
                    const auto &passes = window.pipelineResult()->passes;
                    bool found = false;
                    for (std::size_t i = 0; i < passes.size() && !found; ++i)
                        if (QString::fromStdString(passes[i].name) == parser.value(step)) {
                            found = true;
                            window.showStep(int(i));
                        }
                    if (!found) {
                        QStringList names;
                        for (const auto &p : passes)
                            names << QString::fromStdString(p.name);
                        names.removeDuplicates();
                        // A pass of another level (layout-nhwc is in layout and all; the app
                        // starts from extended): say which --level has it.
                        QString hint;
                        for (const std::string &l : opscope::passes::levelNames())
                            if (hint.isEmpty()) {
                                opscope::passes::PipelineSpec spec;
                                spec.level = l;
                                if (const auto list = opscope::passes::resolvePipeline(spec);
                                    list && std::find(list->begin(), list->end(), parser.value(step).toStdString()) !=
                                                list->end())
                                    hint = QStringLiteral("; it runs at --level %1").arg(QString::fromStdString(l));
                            }
                        // The hint first: after three dozen pass names it went unread.
                        std::fprintf(stderr, "opscope: --step: no pass '%s' ran at level %s%s (its passes: %s)\n",
                                     qPrintable(parser.value(step)),
                                     qPrintable(window.passPanel()->level()), qPrintable(hint),
                                     qPrintable(names.join(QStringLiteral(", "))));
                        QApplication::exit(1);
                        return;
                    }
                    if (window.isBusy())
                        return;
                }
                [[fallthrough]];
            case 2:
                if (parser.isSet(enter) && window.graphPane()->enterBody(parser.value(enter).toStdString()) &&
                    window.isBusy())
                    return;
                [[fallthrough]];
            default:
                if (parser.isSet(select) && !window.selectNode(parser.value(select))) {
                    std::fprintf(stderr, "opscope: --select: no node '%s' in the graph shown\n",
                                 qPrintable(parser.value(select)));
                    QApplication::exit(1);
                    return;
                }
                if (parser.isSet(values) || parser.isSet(o.activations))
                    window.showValuesTab();
                if (parser.isSet(o.activations) && !*probed) {
                    *probed = true;
                    emit window.valuesPanel()->probeRequested();
                    if (window.isBusy())
                        return; // idle again when the run is done
                }
                if ((parser.isSet(o.memory) || parser.isSet(o.memoryAsRun)) && !*planned) {
                    *planned = true;
                    window.memoryPanel()->setPlansAsRun(parser.isSet(o.memoryAsRun));
                    window.planMemoryAction()->trigger();
                    if (window.isBusy())
                        return;
                }
                QTimer::singleShot(300, &window, [&window, out] {
                    if (!window.lastError().isEmpty())
                        std::fprintf(stderr, "opscope: %s\n", qPrintable(window.lastError()));
                    const bool ok = window.grab().save(out);
                    QApplication::exit(ok && window.lastError().isEmpty() ? 0 : 1);
                });
            }
        };
        QObject::connect(&window, &opscope::MainWindow::idle, &window,
                         [advance] { QTimer::singleShot(100, advance); });
        QObject::connect(&window, &opscope::MainWindow::loadFailed, &window, [](const QString &message) {
            std::fprintf(stderr, "opscope: %s\n", qPrintable(message)); // the dialog is not seen in a script
            QApplication::exit(1);
        });
        QTimer::singleShot(60000, &app, [] { QApplication::exit(2); }); // never hang a script
    }
    return QApplication::exec();
}

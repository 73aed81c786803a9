// The Values tab's activations: a selected node's inputs and outputs computed by one run of the
// model it belongs to (core's probeValues keeps only those), shown beside its constants and kept
// for the model until another one is shown.

#include "mainwindow.h"

#include "inspect/tensorvalues.h"
#include "memoryview.h"
#include "runtime/probe.h"
#include "runtime/randominputs.h"
#include "runtime/session.h"
#include "valuespanel.h"

#include <QFutureWatcher>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

namespace opscope {

namespace {

// The values of `node` only a run computes: non-constant inputs and outputs.
std::vector<std::string> computedValues(const Graph &graph, NodeId node)
{
    std::vector<std::string> out;
    const Node &n = graph.node(node);
    for (const std::vector<ValueId> *list : {&n.inputs, &n.outputs})
        for (ValueId v : *list)
            if (v.valid() && !constantValue(graph, v) &&
                std::find(out.begin(), out.end(), graph.value(v).name) == out.end())
                out.push_back(graph.value(v).name);
    return out;
}

} // namespace

void MainWindow::showNodeValues()
{
    if (!m_inspectedModel || !m_inspectedGraph || !m_inspectedNode.valid())
        return;
    const Graph &graph = *m_inspectedGraph;
    std::vector<Tensor> computed;
    const std::vector<std::string> wanted = computedValues(graph, m_inspectedNode);
    const bool sameModel = m_activationsModel == m_inspectedModel;
    std::size_t known = 0;
    std::vector<ComputedValue> declared; // each computed value beside its declared type
    for (const std::string &name : wanted)
        if (const auto it = m_activations.find(name); sameModel && it != m_activations.end()) {
            computed.push_back(it->second);
            ++known;
            if (const ValueId v = graph.findValue(name); v.valid())
                declared.push_back({name, &graph.value(v).type, it->second.dtype, it->second.dims});
        }
    m_values->setTensors(constantInputs(graph, m_inspectedNode), std::move(computed));
    const bool mainGraph = &graph == &m_inspectedModel->graph;
    // The run's dims are the Memory dock's (or --dim): say which, a softmax over seq = 1 misleads.
    QStringList bound;
    for (const auto &[name, value] : m_activationDims)
        bound << QStringLiteral("%1=%2").arg(QString::fromStdString(name)).arg(value);
    const QString inputs = bound.isEmpty() ? tr("random inputs, symbolic dims 1")
                                           : tr("random inputs, %1 (the Memory dock's dims), other dims 1")
                                                 .arg(bound.join(QStringLiteral(", ")));
    const QString done = mainGraph ? tr("inputs and outputs from one run (%1)").arg(inputs)
                                   : tr("inputs and outputs from one run, inside the body: its last iteration "
                                        "(%1)").arg(inputs);
    // A computed value the model declares otherwise (a batch fixed to 1 in value_info): said here,
    // where the user compares the two.
    QString note = known && known == wanted.size() ? done : m_probeNote;
    for (const std::string &m : declarationMismatches(declared, "tensor"))
        note += QStringLiteral("\n") + tr("Note: %1").arg(QString::fromStdString(m));
    m_values->setProbeState(known < wanted.size(), bool(m_cancelProbe), note);
}

void MainWindow::probeInspectedNode()
{
    if (m_cancelProbe || !m_inspectedModel || !m_inspectedGraph)
        return;
    const std::vector<std::string> names = computedValues(*m_inspectedGraph, m_inspectedNode);
    if (names.empty())
        return;
    // Values of one run belong to its dims: other dims, another run.
    std::map<std::string, std::int64_t> dims = m_memory->dims();
    for (auto it = dims.begin(); it != dims.end();)
        it = checkDimNames({{it->first, it->second}}, m_inspectedModel->graph) ? std::next(it) : dims.erase(it);
    if (m_activationsModel != m_inspectedModel || m_activationDims != dims) {
        m_activations.clear();
        m_activationsModel = m_inspectedModel;
        m_activationDims = dims;
    }
    m_cancelProbe = std::make_shared<std::atomic<bool>>(false);
    m_probeNote = tr("running…");
    setBusy(tr("Running the model for %1's values…").arg(QString::fromStdString(m_inspectedGraph->node(m_inspectedNode).name)),
            true);
    showNodeValues();
    auto *watcher = new QFutureWatcher<Expected<ProbedValues>>(this);
    const std::shared_ptr<const Model> model = m_inspectedModel;
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, model] {
        watcher->deleteLater();
        m_cancelProbe.reset();
        Expected<ProbedValues> r = watcher->result();
        if (!r) {
            m_probeNote = QString::fromStdString(r.status().message());
        } else {
            m_probeNote = tr("computed in %1 ms (random inputs)").arg(r->milliseconds, 0, 'f', 1);
            if (m_activationsModel == model)
                for (Tensor &t : r->values)
                    m_activations[t.name] = std::move(t);
        }
        showNodeValues();
        updateBusy();
    });
    ProbeOptions options;
    options.cancel = m_cancelProbe.get();
    options.random.dims = m_activationDims;
    auto cancel = m_cancelProbe;
    watcher->setFuture(QtConcurrent::run([model, names, options, cancel] { return probeValues(*model, names, options); }));
}

} // namespace opscope

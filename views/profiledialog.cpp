#include "profiledialog.h"

#include "runtime/conformance.h"
#include "runtime/npy.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QThread>
#include <set>

namespace opscope {

namespace {

constexpr const char *kScheduleNames[] = {"serial", "parallel", "greedy", "round-robin", "pipeline"};

// The graph's real inputs (initializers listed as inputs are weights, not feeds).
std::vector<const Value *> feedInputs(const Graph &g)
{
    std::vector<const Value *> out;
    for (ValueId v : g.inputs())
        if (!g.value(v).initializer)
            out.push_back(&g.value(v));
    return out;
}

} // namespace

ProfileDialog::ProfileDialog(std::shared_ptr<const Model> model, QWidget *parent)
    : QDialog(parent), m_model(std::move(model))
{
    setWindowTitle(tr("Profiling session"));
    auto *form = new QFormLayout(this);
    auto *schedules = new QHBoxLayout;
    for (int i = 0; i < int(m_schedules.size()); ++i) {
        m_schedules[std::size_t(i)] = new QCheckBox(QString::fromLatin1(kScheduleNames[i]), this);
        m_schedules[std::size_t(i)]->setChecked(i < 3);
        schedules->addWidget(m_schedules[std::size_t(i)]);
    }
    form->addRow(tr("Schedules"), schedules);
    m_devices = new QSpinBox(this);
    m_devices->setRange(1, 64);
    m_devices->setValue(2);
    form->addRow(tr("CPU devices"), m_devices);
    m_threads = new QSpinBox(this);
    m_threads->setRange(1, 64);
    form->addRow(tr("Threads per device"), m_threads);
    connect(m_devices, &QSpinBox::valueChanged, this, &ProfileDialog::updateWarning);
    connect(m_threads, &QSpinBox::valueChanged, this, &ProfileDialog::updateWarning);
    m_iterations = new QSpinBox(this);
    m_iterations->setRange(1, 1000);
    m_iterations->setValue(10);
    form->addRow(tr("Iterations"), m_iterations);
    m_measured = new QCheckBox(tr("Plan parallel and greedy with the op times serial measured"), this);
    m_measured->setChecked(true);
    m_measured->setToolTip(tr("Off: plan from the cost model's FLOP/byte estimates"));
    form->addRow(tr("Costs"), m_measured);
    // Only the runs asked for: the all-cores serial run is an extra the user chooses.
    m_allCores = new QCheckBox(tr("Also serial on one device with every core as an intra-op thread"), this);
    form->addRow(QString(), m_allCores);

    // Symbolic dims, as --dim NAME=VALUE.
    std::set<std::string> symbols;
    if (m_model)
        for (const Value *v : feedInputs(m_model->graph))
            if (v->type.shape)
                for (const Dim &d : v->type.shape->dims)
                    if (!d.isKnown() && !d.symbol.empty())
                        symbols.insert(d.symbol);
    for (const std::string &symbol : symbols) {
        auto *box = new QSpinBox(this);
        box->setRange(1, 1 << 20);
        box->setValue(1);
        box->setSpecialValueText(tr("1 (unbound)"));
        box->setToolTip(tr("The size '%1' takes in this run, as opscope-cli's --dim %1=VALUE")
                            .arg(QString::fromStdString(symbol)));
        connect(box, &QSpinBox::valueChanged, this, &ProfileDialog::updateWarning);
        m_dims.emplace(symbol, box);
        form->addRow(tr("Dim %1").arg(QString::fromStdString(symbol)), box);
    }
    // Input files, as --input NAME=FILE.
    if (m_model)
        for (const Value *v : feedInputs(m_model->graph)) {
            auto *row = new QHBoxLayout;
            auto *edit = new QLineEdit(this);
            edit->setPlaceholderText(tr("random (seeded), shaped by the dims above"));
            auto *browse = new QPushButton(tr("Browse…"), this);
            connect(browse, &QPushButton::clicked, this, [this, edit] {
                const QString f = QFileDialog::getOpenFileName(this, tr("Input tensor"), QString(),
                                                               tr("Tensors (*.npy *.pb);;All files (*)"));
                if (!f.isEmpty())
                    edit->setText(f);
            });
            connect(edit, &QLineEdit::textChanged, this, &ProfileDialog::updateWarning);
            row->addWidget(edit, 1);
            row->addWidget(browse);
            m_inputs.emplace(v->name, edit);
            form->addRow(tr("Input %1").arg(QString::fromStdString(v->name)), row);
        }
    m_warning = new QLabel(this);
    m_warning->setWordWrap(true);
    m_warning->setStyleSheet(QStringLiteral("color: #8a5a00;"));
    form->addRow(m_warning);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    updateWarning();
}

void ProfileDialog::updateWarning()
{
    // A dim matters unless every input that uses it comes from a file.
    QStringList unbound;
    for (const auto &[symbol, box] : m_dims) {
        if (box->value() != 1)
            continue;
        bool needed = false;
        for (const Value *v : feedInputs(m_model->graph)) {
            const QLineEdit *file = inputFile(v->name);
            if (!v->type.shape || (file && !file->text().isEmpty()))
                continue;
            for (const Dim &d : v->type.shape->dims)
                needed = needed || d.symbol == symbol;
        }
        if (needed)
            unbound << QString::fromStdString(symbol);
    }
    QStringList lines;
    if (!unbound.isEmpty())
        lines << tr("%1 left at 1: the run measures inputs of that size, which can be far "
                    "faster than the sizes you deploy with.")
                     .arg(unbound.join(QStringLiteral(", ")));
    // More workers than cores: parallel and greedy would measure time-slicing, not parallelism.
    const int cores = std::max(1, QThread::idealThreadCount());
    if (m_devices->value() * m_threads->value() > cores)
        lines << tr("%1 devices × %2 threads need %3 cores; this machine has %4, so the workers share "
                    "cores and parallel and greedy times measure time-slicing.")
                     .arg(m_devices->value())
                     .arg(m_threads->value())
                     .arg(m_devices->value() * m_threads->value())
                     .arg(cores);
    m_warning->setText(lines.join(QStringLiteral("\n")));
    m_warning->setVisible(!lines.isEmpty());
}

Expected<schedule::ProfileOptions> ProfileDialog::options() const
{
    schedule::ProfileOptions o;
    o.strategies.clear();
    for (int i = 0; i < int(m_schedules.size()); ++i)
        if (m_schedules[std::size_t(i)]->isChecked())
            o.strategies.push_back(*schedule::strategyFromName(kScheduleNames[i]));
    if (o.strategies.empty())
        return Status::invalid("choose at least one schedule");
    o.devices = m_devices->value();
    o.threadsPerDevice = m_threads->value();
    o.iterations = m_iterations->value();
    o.measuredCosts = m_measured->isChecked();
    o.allCoresSerial = m_allCores->isChecked();
    for (const auto &[symbol, box] : m_dims)
        if (box->value() != 1)
            o.dims[symbol] = box->value();
    for (const auto &[name, edit] : m_inputs) {
        const std::filesystem::path file = edit->text().trimmed().toStdString();
        if (file.empty())
            continue;
        Expected<RuntimeTensor> t = file.extension() == ".pb" ? readTensorFile(file) : readNpy(file);
        if (!t)
            return t.status().withContext("input '" + name + "'");
        o.given.emplace_back(name, std::move(*t));
    }
    return o;
}

QSpinBox *ProfileDialog::dimBox(const std::string &symbol) const
{
    const auto it = m_dims.find(symbol);
    return it == m_dims.end() ? nullptr : it->second;
}

QLineEdit *ProfileDialog::inputFile(const std::string &input) const
{
    const auto it = m_inputs.find(input);
    return it == m_inputs.end() ? nullptr : it->second;
}

QString ProfileDialog::dimWarning() const
{
    return m_warning->text();
}

std::vector<std::string> ProfileDialog::symbols() const
{
    std::vector<std::string> out;
    for (const auto &[symbol, box] : m_dims)
        out.push_back(symbol);
    return out;
}

} // namespace opscope

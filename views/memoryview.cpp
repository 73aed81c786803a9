#include "memoryview.h"

#include "categorycolors.h"
#include "util/systemmemory.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QSpinBox>
#include <QToolTip>
#include <QVBoxLayout>

namespace opscope {

namespace {

constexpr int AxisLeft = 76;  // offset labels
constexpr int AxisBottom = 22; // step labels
constexpr int Margin = 8;

QString bytes(std::uint64_t b)
{
    return QString::fromStdString(bytesText(b));
}

// A rectangle of its own: in the arena, not a view drawn inside its base.
bool drawn(const MemoryPlan &plan, const PlannedTensor &t)
{
    return inArena(plan, t) && t.placement != TensorPlacement::View;
}

} // namespace

MemoryView::MemoryView(QWidget *parent) : QWidget(parent)
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void MemoryView::setPlan(std::shared_ptr<const MemoryPlan> plan, std::shared_ptr<const Model> model, int device)
{
    m_plan = std::move(plan);
    m_model = std::move(model);
    m_device = device;
    m_hover.reset();
    m_overwritten.clear();
    if (const DeviceMemory *d = deviceMemory()) {
        m_overwritten.assign(d->tensors.size(), false);
        std::vector<bool> overwritten(m_model ? m_model->graph.valueSlots() : 0, false);
        for (const PlannedTensor &t : d->tensors)
            if (t.placement == TensorPlacement::InPlace && t.sharesWith.index < overwritten.size())
                overwritten[t.sharesWith.index] = true;
        for (std::size_t i = 0; i < d->tensors.size(); ++i)
            m_overwritten[i] = d->tensors[i].value.index < overwritten.size() && overwritten[d->tensors[i].value.index];
        std::vector<bool> active(std::size_t(d->steps) + 1, false);
        for (const PlannedTensor &t : d->tensors)
            if (drawn(*m_plan, t) && t.lastStep < active.size()) {
                active[t.firstStep] = true;
                active[t.lastStep] = true;
            }
        if (d->peakStep < active.size())
            active[d->peakStep] = true;
        m_column.assign(active.size() + 1, 0);
        for (std::size_t s = 0; s < active.size(); ++s)
            m_column[s + 1] = m_column[s] + (active[s] ? 1 : 0);
        m_columns = std::max(1, m_column.back());
    }
    update();
}

const DeviceMemory *MemoryView::deviceMemory() const
{
    if (!m_plan || m_device < 0 || std::size_t(m_device) >= m_plan->devices.size())
        return nullptr;
    return &m_plan->devices[std::size_t(m_device)];
}

QRectF MemoryView::plotArea() const
{
    return QRectF(AxisLeft, Margin, std::max(10, width() - AxisLeft - Margin), std::max(10, height() - Margin - AxisBottom));
}

double MemoryView::columnX(double column) const
{
    const QRectF area = plotArea();
    return area.left() + area.width() * column / m_columns;
}

std::uint64_t MemoryView::arenaBytes() const
{
    const DeviceMemory *d = deviceMemory();
    return d ? std::max<std::uint64_t>(d->plannedBytes, 1) : 1;
}

QRectF MemoryView::tensorRect(std::size_t index) const
{
    const DeviceMemory *d = deviceMemory();
    if (!d || index >= d->tensors.size() || !drawn(*m_plan, d->tensors[index]))
        return {};
    const PlannedTensor &t = d->tensors[index];
    const QRectF area = plotArea();
    if (t.lastStep + 1 >= m_column.size())
        return {};
    // The step an in-place output overwrites its input is split between the two.
    const double start = m_column[t.firstStep] + (t.placement == TensorPlacement::InPlace ? 0.5 : 0.0);
    const double end = m_column[t.lastStep] + (index < m_overwritten.size() && m_overwritten[index] ? 0.5 : 1.0);
    const double x0 = columnX(start);
    const double x1 = columnX(end);
    const double scale = area.height() / double(arenaBytes());
    const double y1 = area.bottom() - double(t.offset) * scale;
    const double y0 = area.bottom() - double(t.offset + std::max<std::uint64_t>(t.bytes, 1)) * scale;
    // At least a pixel each way, so a 64-byte tensor in a 100 MB arena can still be hovered.
    return QRectF(QPointF(x0, y0), QPointF(std::max(x1, x0 + 1.0), std::max(y1, y0 + 1.0)));
}

double MemoryView::peakX() const
{
    const DeviceMemory *d = deviceMemory();
    if (!d)
        return -1;
    if (d->peakStep >= m_column.size())
        return -1;
    return columnX(m_column[d->peakStep] + 0.5);
}

std::optional<std::size_t> MemoryView::tensorAt(QPointF pos) const
{
    const DeviceMemory *d = deviceMemory();
    if (!d)
        return std::nullopt;
    // Later tensors are painted on top: search from the end.
    for (std::size_t i = d->tensors.size(); i-- > 0;)
        if (tensorRect(i).contains(pos))
            return i;
    return std::nullopt;
}

QString MemoryView::describe(const PlannedTensor &t) const
{
    const Graph &g = m_model->graph;
    QString text = tr("<b>%1</b><br>%2 at offset %3 · steps %4–%5<br>from %6 (%7)")
                       .arg(QString::fromStdString(plannedName(g, t)).toHtmlEscaped(), bytes(t.bytes))
                       .arg(t.offset)
                       .arg(t.firstStep)
                       .arg(t.lastStep)
                       .arg(QString::fromStdString(g.node(t.producer).name).toHtmlEscaped(),
                            QString::fromStdString(g.node(t.producer).opType));
    if (t.isWorkspace())
        text += tr("<br>the kernel's own bytes during its call (reorders, oneDNN scratchpad)");
    if (t.placement == TensorPlacement::InPlace)
        text += tr("<br>in place of %1").arg(QString::fromStdString(g.value(t.sharesWith).name).toHtmlEscaped());
    return text;
}

void MemoryView::setPlaceholder(const QString &text)
{
    m_placeholder = text;
    update();
}

void MemoryView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    const CanvasTheme &theme = canvasTheme();
    p.fillRect(rect(), theme.canvas);
    const DeviceMemory *d = deviceMemory();
    const QRectF area = plotArea();
    p.setPen(theme.axis);
    p.drawRect(area);
    if (!d || !m_model) {
        p.setPen(theme.axisText);
        p.drawText(area.adjusted(12, 0, -12, 0), Qt::AlignCenter | Qt::TextWordWrap,
                   m_placeholder.isEmpty() ? tr("Profile ▸ Plan memory shows the memory plan of the model on screen")
                                           : m_placeholder);
        return;
    }
    // Offset axis: 0, half and the arena size; step axis: 0, the peak and the last step.
    p.setPen(theme.axisText);
    QFont small = font();
    small.setPointSizeF(std::max(7.0, small.pointSizeF() * 0.85));
    p.setFont(small);
    for (double f : {0.0, 0.5, 1.0}) {
        const double y = area.bottom() - f * area.height();
        p.drawText(QRectF(0, y - 8, AxisLeft - 6, 16), Qt::AlignRight | Qt::AlignVCenter,
                   bytes(std::uint64_t(f * double(d->plannedBytes))));
    }
    p.drawText(QRectF(area.left(), area.bottom() + 2, 80, AxisBottom - 2), Qt::AlignLeft | Qt::AlignTop, tr("step 0"));
    p.drawText(QRectF(area.right() - 80, area.bottom() + 2, 80, AxisBottom - 2), Qt::AlignRight | Qt::AlignTop,
               QString::number(std::max<std::uint32_t>(d->steps, 1) - 1));

    p.setClipRect(area.adjusted(0.5, 0.5, -0.5, -0.5));
    for (std::size_t i = 0; i < d->tensors.size(); ++i) {
        const QRectF r = tensorRect(i);
        if (r.isEmpty())
            continue;
        const Node &producer = m_model->graph.node(d->tensors[i].producer);
        const OpCategory c = opCategory(producer.opType, producer.domain);
        QColor fill = categoryFill(c);
        if (m_hover == i)
            fill = fill.lighter(125);
        p.fillRect(r, fill);
        if (d->tensors[i].isWorkspace()) // a kernel's own bytes, not a value: hatched
            p.fillRect(r, QBrush(categoryBorder(c), Qt::BDiagPattern));
        if (r.width() > 3 && r.height() > 3) {
            p.setPen(d->tensors[i].placement == TensorPlacement::InPlace ? categoryBorder(c).darker(140)
                                                                          : categoryBorder(c));
            p.drawRect(r.adjusted(0, 0, -1, -1));
        }
    }
    p.setClipping(false);
    // The step of the order with the most bytes live: every byte live there is needed at once.
    const double x = peakX();
    QPen dashed(theme.selection, 1.5, Qt::DashLine);
    p.setPen(dashed);
    p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
    p.setPen(theme.axisText);
    const QString peak = tr("peak at step %1: %2 live").arg(d->peakStep).arg(bytes(d->peakStepBytes));
    const double tw = p.fontMetrics().horizontalAdvance(peak) + 8;
    const double tx = x + tw + 4 < area.right() ? x + 4 : x - tw - 4;
    p.drawText(QRectF(tx, area.bottom() + 2, tw, AxisBottom - 2), Qt::AlignCenter, peak);
}

void MemoryView::mouseMoveEvent(QMouseEvent *event)
{
    const std::optional<std::size_t> hit = tensorAt(event->position());
    if (hit != m_hover) {
        m_hover = hit;
        update();
    }
    if (hit)
        QToolTip::showText(event->globalPosition().toPoint(), describe(deviceMemory()->tensors[*hit]), this);
    else
        QToolTip::hideText();
}

void MemoryView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton)
        return;
    if (const std::optional<std::size_t> hit = tensorAt(event->position()))
        emit nodeActivated(QString::fromStdString(m_model->graph.node(deviceMemory()->tensors[*hit].producer).name));
}

void MemoryView::leaveEvent(QEvent *)
{
    if (m_hover) {
        m_hover.reset();
        update();
    }
}

MemoryPanel::MemoryPanel(QWidget *parent)
    : QWidget(parent), m_summary(new QLabel(this)), m_dimRow(new QHBoxLayout), m_devices(new QComboBox(this)),
      m_subject(new QComboBox(this)), m_view(new MemoryView(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto *top = new QHBoxLayout;
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    top->addWidget(m_summary, 1);
    top->addLayout(m_dimRow);
    m_subject->addItem(tr("Model on screen"));
    m_subject->addItem(tr("As run runs it"));
    m_subject->setToolTip(tr("Model on screen: the graph shown (as loaded, or a pass step), its bytes as the graph's "
                             "heat. As run runs it: the loaded model optimized at level all, as opscope-cli run and "
                             "memory run it — the figures opscope-cli memory prints."));
    connect(m_subject, &QComboBox::currentIndexChanged, this, &MemoryPanel::planRequested);
    top->addWidget(m_subject);
    auto *plan = new QPushButton(tr("Plan"), this);
    plan->setToolTip(tr("Plan again for these dims (one run with random inputs)"));
    connect(plan, &QPushButton::clicked, this, &MemoryPanel::planRequested);
    top->addWidget(plan);
    top->addWidget(m_devices);
    layout->addLayout(top);
    layout->addWidget(m_view, 1);
    m_devices->hide();
    connect(m_devices, &QComboBox::currentIndexChanged, this, &MemoryPanel::showDevice);
    connect(m_view, &MemoryView::nodeActivated, this, &MemoryPanel::nodeActivated);
    setMessage(tr("Profile ▸ Plan memory (Ctrl+M) plans the memory of the model on screen: one run with "
                  "random inputs sizes every tensor."));
}

void MemoryPanel::setMessage(const QString &text)
{
    m_summary->setText(text);
}

bool MemoryPanel::plansAsRun() const
{
    return m_subject->currentIndex() == 1;
}

void MemoryPanel::setPlansAsRun(bool asRun)
{
    const QSignalBlocker block(m_subject);
    m_subject->setCurrentIndex(asRun ? 1 : 0);
}

void MemoryPanel::setPlan(std::shared_ptr<const MemoryPlan> plan, std::shared_ptr<const Model> model,
                          std::shared_ptr<const MemoryPlan> before, const QString &subject)
{
    m_subjectText = subject;
    m_plan = std::move(plan);
    m_model = std::move(model);
    m_before = std::move(before);
    const QSignalBlocker block(m_devices);
    m_devices->clear();
    if (m_plan)
        for (const DeviceMemory &d : m_plan->devices)
            m_devices->addItem(QString::fromStdString(d.device));
    m_devices->setVisible(m_devices->count() > 1);
    showDevice(0);
}

QString MemoryPanel::summaryText() const
{
    return m_summary->text();
}

std::map<std::string, double> MemoryPanel::bytesPerNode() const
{
    std::map<std::string, double> out;
    if (!m_plan || !m_model)
        return out;
    for (const DeviceMemory &d : m_plan->devices)
        for (const PlannedTensor &t : d.tensors)
            if (drawn(*m_plan, t))
                out[m_model->graph.node(t.producer).name] += double(t.bytes);
    return out;
}

void MemoryPanel::setSymbolicDims(const std::vector<std::string> &names)
{
    std::vector<std::string> shown;
    for (const auto &[name, box] : m_dims)
        shown.push_back(name);
    if (shown == names)
        return;
    for (const auto &[name, box] : m_dims) {
        m_dimRow->removeWidget(box);
        delete box;
    }
    m_dims.clear();
    for (const std::string &name : names) {
        auto *box = new QSpinBox(this);
        box->setRange(1, 1 << 20);
        const auto preset = m_preset.find(name);
        box->setValue(preset != m_preset.end() ? int(std::clamp<std::int64_t>(preset->second, 1, 1 << 20)) : 1);
        // Long exported names (p2o.DynamicDimension.2) in the prefix would crowd the row.
        QString label = QString::fromStdString(name);
        if (label.size() > 18)
            label = QStringLiteral("…") + label.right(17);
        box->setPrefix(label + QStringLiteral(" = "));
        box->setToolTip(tr("Symbolic dim '%1' of the model's inputs").arg(QString::fromStdString(name)));
        m_dimRow->addWidget(box);
        m_dims.emplace_back(name, box);
    }
}

void MemoryPanel::presetDims(const std::map<std::string, std::int64_t> &dims)
{
    for (const auto &[name, value] : dims)
        m_preset[name] = value;
    for (const auto &[name, box] : m_dims)
        if (const auto it = dims.find(name); it != dims.end())
            box->setValue(int(std::clamp<std::int64_t>(it->second, 1, 1 << 20)));
}

std::map<std::string, std::int64_t> MemoryPanel::dims() const
{
    if (m_dims.empty())
        return m_preset; // no model planned yet: what the user gave (--dim)
    std::map<std::string, std::int64_t> out;
    for (const auto &[name, box] : m_dims)
        out[name] = box->value();
    return out;
}

void MemoryPanel::showDevice(int device)
{
    m_view->setPlan(m_plan, m_model, device);
    if (!m_plan || device < 0 || std::size_t(device) >= m_plan->devices.size())
        return;
    const DeviceMemory &d = m_plan->devices[std::size_t(device)];
    std::size_t inPlace = 0, views = 0, dynamic = 0, workspaces = 0;
    for (const PlannedTensor &t : d.tensors) {
        inPlace += t.placement == TensorPlacement::InPlace;
        views += t.placement == TensorPlacement::View;
        dynamic += t.placement == TensorPlacement::Dynamic || t.placement == TensorPlacement::Own;
        workspaces += t.isWorkspace();
    }
    QString text = m_subjectText.isEmpty() ? QString() : m_subjectText.toHtmlEscaped() + QStringLiteral("<br>");
    text += tr("<b>Arena %1</b> (%2) · lower bound %3 · in place only %4 · every tensor its own %5 — "
                      "%6 tensors in place, %7 views, %8 kernel workspaces (hatched), %9 outside it (data-dependent size, or made by their kernel)")
                       .arg(bytes(d.plannedBytes), QString::fromStdString(d.strategy), bytes(d.lowerBoundBytes),
                            bytes(d.inPlaceBytes), bytes(d.naiveBytes))
                       .arg(inPlace)
                       .arg(views)
                       .arg(workspaces)
                       .arg(dynamic);
    if (m_before && std::size_t(device) < m_before->devices.size()) {
        const std::uint64_t was = m_before->devices[std::size_t(device)].plannedBytes;
        const auto delta = std::int64_t(d.plannedBytes) - std::int64_t(was);
        text += tr("<br>This pass step: arena %1 → %2 (%3%4)")
                    .arg(bytes(was), bytes(d.plannedBytes), delta < 0 ? QStringLiteral("−") : QStringLiteral("+"),
                         bytes(std::uint64_t(std::llabs(delta))));
    }
    m_summary->setText(text);
}

} // namespace opscope

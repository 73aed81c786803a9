#include "valuespanel.h"

#include "inspect/inspection.h"
#include "inspect/tensorvalues.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

namespace opscope {

namespace {

constexpr std::int64_t kFullTextLimit = 256;

// 16 bars over [min, max]; the tooltip gives the counts.
class Histogram : public QWidget
{
public:
    using QWidget::QWidget;
    void setBins(std::vector<std::int64_t> bins, double lo, double hi)
    {
        m_bins = std::move(bins);
        QStringList counts;
        for (std::int64_t b : m_bins)
            counts << QString::number(b);
        setToolTip(m_bins.empty() ? QString()
                                  : tr("%1 bins over [%2, %3]: %4")
                                        .arg(m_bins.size())
                                        .arg(lo)
                                        .arg(hi)
                                        .arg(counts.join(QLatin1Char(' '))));
        setVisible(!m_bins.empty());
        update();
    }
    QSize sizeHint() const override { return {240, 44}; }

protected:
    void paintEvent(QPaintEvent *) override
    {
        if (m_bins.empty())
            return;
        QPainter p(this);
        const std::int64_t top = std::max<std::int64_t>(1, *std::max_element(m_bins.begin(), m_bins.end()));
        const double w = double(width()) / double(m_bins.size());
        p.setPen(Qt::NoPen);
        p.setBrush(QColor(0x5b, 0x84, 0xc4));
        for (std::size_t i = 0; i < m_bins.size(); ++i) {
            const double h = m_bins[i] ? std::max(1.0, double(height() - 2) * double(m_bins[i]) / double(top)) : 0.0;
            p.drawRect(QRectF(double(i) * w + 1, height() - h, w - 2, h));
        }
    }

private:
    std::vector<std::int64_t> m_bins;
};

QString shapeText(const Tensor &t)
{
    QStringList dims;
    for (std::int64_t d : t.dims)
        dims << QString::number(d);
    const auto type = dataTypeName(t.dtype);
    return QStringLiteral("%1[%2]").arg(QString::fromLatin1(type.data(), qsizetype(type.size())), dims.join(QLatin1Char(',')));
}

} // namespace

TensorTableModel::TensorTableModel(QObject *parent) : QAbstractTableModel(parent) {}
TensorTableModel::~TensorTableModel() = default;

void TensorTableModel::setSlice(std::optional<TensorSlice> slice)
{
    beginResetModel();
    m_slice = slice ? std::make_unique<TensorSlice>(std::move(*slice)) : nullptr;
    endResetModel();
}

int TensorTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_slice ? 0 : int(std::min<std::int64_t>(m_slice->rows(), INT32_MAX));
}

int TensorTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_slice ? 0 : int(std::min<std::int64_t>(m_slice->cols(), INT32_MAX));
}

QVariant TensorTableModel::data(const QModelIndex &index, int role) const
{
    if (!m_slice || !index.isValid())
        return {};
    if (role == Qt::DisplayRole)
        return QString::fromStdString(m_slice->text(index.row(), index.column()));
    if (role == Qt::TextAlignmentRole)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant TensorTableModel::headerData(int section, Qt::Orientation, int role) const
{
    return role == Qt::DisplayRole ? QVariant(section) : QVariant();
}

ValuesPanel::ValuesPanel(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    m_chooser = new QComboBox(this);
    m_chooser->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_chooser->setMinimumContentsLength(20);
    connect(m_chooser, &QComboBox::currentIndexChanged, this, &ValuesPanel::showTensor);
    layout->addWidget(m_chooser);
    m_probeRow = new QWidget(this);
    auto *probeLayout = new QHBoxLayout(m_probeRow);
    probeLayout->setContentsMargins(0, 0, 0, 0);
    m_probe = new QPushButton(tr("Run once for its inputs and outputs"), m_probeRow);
    m_probe->setToolTip(tr("Runs the model once (random inputs, symbolic dims 1) keeping only this node's "
                           "inputs and outputs, and shows them here"));
    connect(m_probe, &QPushButton::clicked, this, &ValuesPanel::probeRequested);
    m_probeNote = new QLabel(m_probeRow);
    m_probeNote->setWordWrap(true);
    probeLayout->addWidget(m_probe);
    probeLayout->addWidget(m_probeNote, 1);
    layout->addWidget(m_probeRow);
    m_probeRow->hide();
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);
    m_histogram = new Histogram(this);
    m_histogram->setMinimumHeight(40);
    layout->addWidget(m_histogram);
    m_axes = new QWidget(this);
    m_axesLayout = new QHBoxLayout(m_axes);
    m_axesLayout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_axes);
    m_stack = new QStackedWidget(this);
    m_text = new QPlainTextEdit(this);
    m_text->setReadOnly(true);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_view = new QTableView(this);
    m_model = new TensorTableModel(this);
    m_view->setModel(m_model);
    m_view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_view->horizontalHeader()->setDefaultSectionSize(92); // "-0.00243153" fits
    m_view->verticalHeader()->setDefaultSectionSize(20);
    m_stack->addWidget(m_text);
    m_stack->addWidget(m_view);
    layout->addWidget(m_stack, 1);
    setTensors({});
}

void ValuesPanel::setTensors(std::vector<Tensor> constants, std::vector<Tensor> computed)
{
    const int first = int(constants.size());
    const std::size_t count = computed.size();
    for (Tensor &t : computed)
        constants.push_back(std::move(t));
    setTensors(std::move(constants));
    if (count == 0)
        return;
    const QSignalBlocker block(m_chooser);
    for (int i = first; i < m_chooser->count(); ++i)
        m_chooser->setItemText(i, m_chooser->itemText(i) + tr("  (from a run)"));
    m_chooser->setCurrentIndex(first);
    showTensor(first);
}

void ValuesPanel::setTensors(std::vector<Tensor> tensors)
{
    m_tensors = std::move(tensors);
    const QSignalBlocker block(m_chooser);
    m_chooser->clear();
    for (const Tensor &t : m_tensors)
        m_chooser->addItem(QString::fromStdString(t.name.empty() ? "(unnamed)" : t.name));
    m_chooser->setVisible(m_tensors.size() > 1);
    m_current = -1;
    showTensor(m_tensors.empty() ? -1 : 0);
}

void ValuesPanel::setProbeState(bool available, bool running, const QString &note)
{
    m_probeRow->setVisible(available || !note.isEmpty());
    m_probe->setVisible(available);
    m_probe->setEnabled(!running);
    m_probeNote->setText(note);
}

ValuesPanel::~ValuesPanel()
{
    if (m_statsCancel)
        m_statsCancel->store(true);
}

void ValuesPanel::showStatistics(const TensorStats &s)
{
    QString summary = m_heading;
    if (!s.histogram.empty())
        summary += tr("<br>min %1 · max %2 · mean %3 · std %4")
                       .arg(s.min, 0, 'g', 6)
                       .arg(s.max, 0, 'g', 6)
                       .arg(s.mean, 0, 'g', 6)
                       .arg(s.stddev, 0, 'g', 6);
    if (s.count)
        summary += tr(" · NaN %1 · Inf %2").arg(s.nan).arg(s.inf);
    m_summary->setText(summary);
    static_cast<Histogram *>(m_histogram)->setBins(s.histogram, s.min, s.max);
}

void ValuesPanel::startStatistics()
{
    if (!m_statsPending || m_statsCancel || m_current < 0)
        return;
    m_statsCancel = std::make_shared<std::atomic<bool>>(false);
    auto *watcher = new QFutureWatcher<TensorStats>(this);
    const int generation = m_statsGeneration;
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != m_statsGeneration)
            return; // another tensor is shown now
        m_statsPending = false;
        showStatistics(watcher->result());
    });
    watcher->setFuture(QtConcurrent::run([tensor = m_tensors[std::size_t(m_current)], cancel = m_statsCancel] {
        return tensorStats(tensor, cancel.get());
    }));
}

void ValuesPanel::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    startStatistics();
}

void ValuesPanel::showTensor(int index)
{
    m_current = index;
    ++m_statsGeneration;
    m_statsPending = false;
    if (m_statsCancel)
        m_statsCancel->store(true);
    m_statsCancel.reset();
    if (index < 0 || std::size_t(index) >= m_tensors.size()) {
        m_summary->setText(tr("Select a node with weights or constants, or an initializer, to see its values."));
        static_cast<Histogram *>(m_histogram)->setBins({}, 0, 0);
        m_axes->hide();
        m_text->clear();
        m_model->setSlice(std::nullopt);
        m_stack->setCurrentWidget(m_text);
        return;
    }
    const Tensor &t = m_tensors[std::size_t(index)];
    m_heading = QStringLiteral("<b>%1</b> %2 · %3 values")
                    .arg(QString::fromStdString(t.name).toHtmlEscaped(), shapeText(t))
                    .arg(QLocale().toString(qlonglong(t.elementCount())));
    if (t.elementCount() <= kInlineStatsElements) {
        showStatistics(tensorStats(t));
    } else {
        m_summary->setText(m_heading + tr("<br>reading %1 for the statistics…")
                                           .arg(QLocale().formattedDataSize(qint64(t.byteSize()))));
        static_cast<Histogram *>(m_histogram)->setBins({}, 0, 0);
        m_statsPending = true;
        if (isVisible())
            startStatistics(); // else when the tab is shown: selecting a node reads no weight
    }
    if (const std::optional<std::string> all = allValuesText(t, kFullTextLimit)) {
        m_text->setPlainText(QString::fromStdString(*all));
        m_stack->setCurrentWidget(m_text);
        m_axes->hide();
        m_model->setSlice(std::nullopt);
        return;
    }
    m_text->clear();
    m_stack->setCurrentWidget(m_view);
    rebuildAxes();
    updateSlice();
}

void ValuesPanel::rebuildAxes()
{
    while (QLayoutItem *item = m_axesLayout->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    m_fixed.clear();
    m_rowAxis = m_colAxis = nullptr;
    const Tensor &t = m_tensors[std::size_t(m_current)];
    const int rank = int(t.dims.size());
    m_axes->setVisible(rank >= 2);
    if (rank < 2)
        return;
    // Rows and columns: the last two axes to start with (a weight's kernel, a matrix).
    m_rowAxis = new QComboBox(m_axes);
    m_colAxis = new QComboBox(m_axes);
    for (int k = 0; k < rank; ++k) {
        const QString label = tr("axis %1 (%2)").arg(k).arg(t.dims[std::size_t(k)]);
        m_rowAxis->addItem(label);
        m_colAxis->addItem(label);
    }
    m_rowAxis->setCurrentIndex(rank - 2);
    m_colAxis->setCurrentIndex(rank - 1);
    m_axesLayout->addWidget(new QLabel(tr("rows"), m_axes));
    m_axesLayout->addWidget(m_rowAxis);
    m_axesLayout->addWidget(new QLabel(tr("columns"), m_axes));
    m_axesLayout->addWidget(m_colAxis);
    for (int k = 0; k < rank; ++k) {
        auto *box = new QSpinBox(m_axes);
        box->setRange(0, int(std::min<std::int64_t>(t.dims[std::size_t(k)] - 1, INT32_MAX)));
        box->setPrefix(tr("[%1] = ").arg(k));
        box->setToolTip(tr("Index along axis %1 for the slice shown").arg(k));
        connect(box, &QSpinBox::valueChanged, this, &ValuesPanel::updateSlice);
        m_fixed.push_back(box);
        m_axesLayout->addWidget(box);
    }
    m_axesLayout->addStretch(1);
    connect(m_rowAxis, &QComboBox::currentIndexChanged, this, &ValuesPanel::updateSlice);
    connect(m_colAxis, &QComboBox::currentIndexChanged, this, &ValuesPanel::updateSlice);
}

void ValuesPanel::updateSlice()
{
    if (m_current < 0)
        return;
    const Tensor &t = m_tensors[std::size_t(m_current)];
    const int rank = int(t.dims.size());
    const int row = m_rowAxis ? m_rowAxis->currentIndex() : 0;
    const int col = m_colAxis ? m_colAxis->currentIndex() : -1;
    std::vector<std::int64_t> fixed;
    for (std::size_t k = 0; k < m_fixed.size(); ++k) {
        fixed.push_back(m_fixed[k]->value());
        m_fixed[k]->setVisible(int(k) != row && int(k) != col); // only the axes held fixed
    }
    Expected<TensorSlice> slice = TensorSlice::make(t, rank ? row : 0, rank >= 2 ? col : -1, fixed);
    m_model->setSlice(slice ? std::optional<TensorSlice>(std::move(*slice)) : std::nullopt);
}

void ValuesPanel::setAxes(int rowAxis, int colAxis, std::vector<std::int64_t> fixed)
{
    if (!m_rowAxis || !m_colAxis)
        return;
    const QSignalBlocker a(m_rowAxis), b(m_colAxis);
    m_rowAxis->setCurrentIndex(rowAxis);
    m_colAxis->setCurrentIndex(colAxis);
    for (std::size_t k = 0; k < m_fixed.size() && k < fixed.size(); ++k) {
        const QSignalBlocker c(m_fixed[k]);
        m_fixed[k]->setValue(int(fixed[k]));
    }
    updateSlice();
}

QString ValuesPanel::probeNoteText() const
{
    return m_probeNote->text();
}

QString ValuesPanel::summaryText() const
{
    return m_summary->text();
}

QString ValuesPanel::fullText() const
{
    return m_stack->currentWidget() == m_text ? m_text->toPlainText() : QString();
}

} // namespace opscope

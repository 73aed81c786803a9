#include "passpanel.h"

#include "passes/registry.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QPlainTextEdit>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace opscope {

PassPanel::PassPanel(QWidget *parent) : QWidget(parent), m_model(new PassListModel(this))
{
    auto *layout = new QVBoxLayout(this);
    auto *top = new QHBoxLayout;
    m_level = new QComboBox(this);
    for (const std::string &l : passes::levelNames())
        m_level->addItem(QString::fromStdString(l));
    m_level->setCurrentText(QStringLiteral("extended"));
    m_level->setToolTip(tr("Pass level: the pipeline to start from"));
    m_target = new QComboBox(this);
    m_target->addItems({QStringLiteral("onnx"), QStringLiteral("ort"), QStringLiteral("none")});
    m_target->setToolTip(tr("Export target: standard ONNX, ONNX Runtime's fused ops, or opscope's own"));
    m_run = new QPushButton(tr("Run (F5)"), this);
    top->addWidget(new QLabel(tr("Level"), this));
    top->addWidget(m_level);
    top->addWidget(new QLabel(tr("Target"), this));
    top->addWidget(m_target);
    top->addStretch();
    top->addWidget(m_run);
    layout->addLayout(top);

    m_table = new QTableView(this);
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(22);
    m_table->horizontalHeader()->setSectionResizeMode(PassListModel::PassColumn, QHeaderView::Stretch);
    for (int c = 1; c < PassListModel::ColumnCount; ++c)
        m_table->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    // The result columns are empty until the pipeline has run: hidden till then, the pass names
    // have the width (on a small screen at 2x they were "constant-…" beside four empty columns).
    connect(m_model, &QAbstractItemModel::modelReset, this, &PassPanel::fitResultColumns);
    fitResultColumns();
    layout->addWidget(m_table);
    // "What does this pass do": the selected pass's own description and rewrite diagram.
    m_about = new QPlainTextEdit(this);
    m_about->setReadOnly(true);
    m_about->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_about->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_about->setPlaceholderText(tr("Select a pass to see what it does"));
    m_about->setMaximumHeight(170);
    layout->addWidget(m_about);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                m_about->setPlainText(current.isValid()
                                          ? current.siblingAtColumn(PassListModel::PassColumn)
                                                .data(PassListModel::DocumentationRole)
                                                .toString()
                                          : QString());
            });

    auto *order = new QHBoxLayout;
    m_up = new QPushButton(tr("Move up"), this);
    m_down = new QPushButton(tr("Move down"), this);
    order->addWidget(m_up);
    order->addWidget(m_down);
    order->addStretch();
    layout->addLayout(order);

    auto *step = new QHBoxLayout;
    m_prev = new QPushButton(tr("◀ Previous (PgUp)"), this);
    m_next = new QPushButton(tr("Next (PgDn) ▶"), this);
    m_final = new QPushButton(tr("Original vs final"), this);
    step->addWidget(m_prev);
    step->addWidget(m_next);
    step->addWidget(m_final);
    layout->addLayout(step);
    auto *match = new QHBoxLayout;
    m_prevMatch = new QPushButton(tr("◂ Previous change"), this);
    m_nextMatch = new QPushButton(tr("Next change ▸"), this);
    m_mode = new QComboBox(this);
    m_mode->addItems({tr("Side by side"), tr("Overlay")});
    match->addWidget(m_prevMatch);
    match->addWidget(m_nextMatch);
    match->addStretch();
    match->addWidget(m_mode);
    layout->addLayout(match);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);

    connect(m_level, &QComboBox::currentTextChanged, this, &PassPanel::reloadLevel);
    connect(m_run, &QPushButton::clicked, this, [this] {
        if (m_running)
            emit cancelRequested();
        else
            emit runRequested(m_model->enabledPasses(), m_target->currentText());
    });
    connect(m_up, &QPushButton::clicked, this, [this] {
        const int row = m_table->currentIndex().row();
        m_model->moveUp(row);
        if (row > 0)
            m_table->selectRow(row - 1);
    });
    connect(m_down, &QPushButton::clicked, this, [this] {
        const int row = m_table->currentIndex().row();
        m_model->moveDown(row);
        if (row >= 0 && row + 1 < m_model->rowCount())
            m_table->selectRow(row + 1);
    });
    connect(m_prev, &QPushButton::clicked, this, &PassPanel::stepPrevious);
    connect(m_next, &QPushButton::clicked, this, &PassPanel::stepNext);
    connect(m_final, &QPushButton::clicked, this, &PassPanel::originalVsFinal);
    connect(m_prevMatch, &QPushButton::clicked, this, &PassPanel::previousMatch);
    connect(m_nextMatch, &QPushButton::clicked, this, &PassPanel::nextMatch);
    connect(m_mode, &QComboBox::currentIndexChanged, this, [this](int i) { emit overlayToggled(i == 1); });
    connect(m_table, &QTableView::activated, this,
            [this](const QModelIndex &i) { emit rowActivated(i.row()); });
    connect(m_table, &QTableView::clicked, this, [this](const QModelIndex &i) {
        if (m_model->hasResult())
            emit rowActivated(i.row());
    });
    reloadLevel();
    setStepEnabled(false, false);
}

QString PassPanel::aboutText() const
{
    return m_about->toPlainText();
}

QString PassPanel::level() const
{
    return m_level->currentText();
}

void PassPanel::setLevel(const QString &level)
{
    if (m_level->findText(level) >= 0)
        m_level->setCurrentText(level);
}

void PassPanel::setTarget(const QString &target)
{
    if (const int i = m_target->findText(target); i >= 0)
        m_target->setCurrentIndex(i);
}

QString PassPanel::target() const
{
    return m_target->currentText();
}

bool PassPanel::overlay() const
{
    return m_mode->currentIndex() == 1;
}

void PassPanel::setOverlay(bool overlay)
{
    m_mode->setCurrentIndex(overlay ? 1 : 0);
}

void PassPanel::reloadLevel()
{
    passes::PipelineSpec spec;
    spec.level = m_level->currentText().toStdString();
    spec.target = "none";
    if (Expected<std::vector<std::string>> list = passes::resolvePipeline(spec))
        m_model->setPipeline(*list);
}

void PassPanel::setRunning(bool running)
{
    m_running = running;
    m_run->setText(running ? tr("Cancel") : tr("Run (F5)"));
    m_level->setEnabled(!running);
    m_target->setEnabled(!running);
}

void PassPanel::setStatus(const QString &text)
{
    m_status->setText(text);
}

void PassPanel::setStepEnabled(bool previous, bool next)
{
    m_prev->setEnabled(previous);
    m_next->setEnabled(next);
    m_final->setEnabled(previous || next);
    m_prevMatch->setEnabled(previous || next);
    m_nextMatch->setEnabled(previous || next);
}

void PassPanel::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    fitResultColumns();
}

void PassPanel::fitResultColumns()
{
    const bool result = m_model->hasResult();
    // Widths in text: the longest pass names are ~30 characters; below that the numbers go first.
    const int em = m_table->fontMetrics().horizontalAdvance(QLatin1Char('m'));
    const int width = m_table->viewport()->width();
    const bool roomy = width >= 40 * em, middling = width >= 28 * em;
    m_table->setColumnHidden(PassListModel::ChangedColumn, !result || !middling);
    m_table->setColumnHidden(PassListModel::NodesColumn, !result);
    m_table->setColumnHidden(PassListModel::TimeColumn, !result || !roomy);
    m_table->setColumnHidden(PassListModel::MatchesColumn, !result || !roomy);
}

} // namespace opscope

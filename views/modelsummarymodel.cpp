#include "modelsummarymodel.h"

#include <algorithm>

#include <QLocale>

namespace opscope {

namespace {

// Internal ids: 0 for a section, section index + 1 for its rows.
constexpr quintptr sectionId = 0;

QString shapeText(const ValueSummary &v)
{
    if (!v.rankKnown)
        return QStringLiteral("[?]");
    QStringList dims;
    for (const std::string &d : v.dims)
        dims << QString::fromStdString(d);
    return "[" + dims.join(',') + "]";
}

} // namespace

ModelSummaryModel::ModelSummaryModel(QObject *parent) : QAbstractItemModel(parent) {}

void ModelSummaryModel::setSummary(const ModelSummary &s, const std::vector<std::string> &warnings)
{
    beginResetModel();
    m_sections.clear();
    // Counts grouped by thousands as the CLI prints them (328,137, not 328137), in any UI language.
    QLocale locale = QLocale::c();
    locale.setNumberOptions(QLocale::DefaultNumberOptions);
    const auto num = [&locale](std::uint64_t v) { return locale.toString(static_cast<qulonglong>(v)); };

    Section model{tr("Model"), {}};
    model.rows.push_back({tr("Producer"), s.producer.empty() ? tr("(unknown)") : QString::fromStdString(s.producer), {}});
    model.rows.push_back({tr("IR version"), QString::number(s.irVersion), QVariant::fromValue(s.irVersion)});
    QStringList opsets;
    for (const OpsetImport &o : s.opsets)
        opsets << QString::fromStdString(o.domain.empty() ? std::string("ai.onnx") : o.domain) + " " +
                      QString::number(o.version);
    model.rows.push_back({tr("Opsets"), opsets.join(", "), {}});
    model.rows.push_back({tr("Graph"), QString::fromStdString(s.graphName), {}});
    model.rows.push_back({tr("Nodes"), num(s.nodeCount), QVariant::fromValue<qulonglong>(s.nodeCount)});
    model.rows.push_back({tr("Nodes with subgraphs"), num(s.nodeCountWithSubgraphs),
                          QVariant::fromValue<qulonglong>(s.nodeCountWithSubgraphs)});
    model.rows.push_back(
        {tr("Parameters"), num(s.parameterCount), QVariant::fromValue<qulonglong>(s.parameterCount)});
    // Paddle2ONNX and others keep weights in Constant nodes: "0 initializers" alone reads as none.
    model.rows.push_back({tr("Held in"),
                          s.constantTensorCount
                              ? tr("%1 initializers, %2 Constant nodes").arg(num(s.initializerCount), num(s.constantTensorCount))
                              : tr("%1 initializers").arg(num(s.initializerCount)),
                          QVariant::fromValue<qulonglong>(s.initializerCount + s.constantTensorCount)});
    model.rows.push_back({tr("Parameter bytes"),
                          locale.formattedDataSize(static_cast<qint64>(s.parameterBytes)),
                          QVariant::fromValue<qulonglong>(s.parameterBytes)});
    model.rows.push_back({tr("Shapes"),
                          // Short enough for the dock's Value column (a Paddle export's long
                          // sentence was cut off); the tooltip has the same text whole.
                          (s.allShapesKnown() ? tr("all known") : tr("%1 unknown").arg(s.valuesUnknown)) +
                              (s.valuesUnknown ? tr(" (%1 static, %2 symbolic; %3 of unknown rank)")
                                                     .arg(s.valuesStatic)
                                                     .arg(s.valuesSymbolic)
                                                     .arg(s.valuesUnknownRank)
                                               : tr(" (%1 static, %2 symbolic)").arg(s.valuesStatic).arg(s.valuesSymbolic)),
                          {}});
    m_sections.push_back(std::move(model));

    const auto values = [](const QString &title, const std::vector<ValueSummary> &list) {
        Section sec{title, {}};
        for (const ValueSummary &v : list)
            sec.rows.push_back(
                {QString::fromStdString(v.name), QString::fromStdString(v.dtype) + " " + shapeText(v), {}});
        return sec;
    };
    m_sections.push_back(values(tr("Inputs"), s.inputs));
    m_sections.push_back(values(tr("Outputs"), s.outputs));

    Section ops{tr("Operators"), {}};
    for (const auto &[op, count] : s.opHistogram)
        ops.rows.push_back(
            {QString::fromStdString(op), QString::number(count), QVariant::fromValue<qulonglong>(count)});
    m_sections.push_back(std::move(ops));

    const bool constants = std::any_of(s.largestInitializers.begin(), s.largestInitializers.end(),
                                       [](const InitializerSummary &i) { return i.constantNode; });
    Section inits{constants ? tr("Largest weights") : tr("Largest initializers"), {}};
    std::vector<QString> names;
    for (const InitializerSummary &i : s.largestInitializers)
        names.push_back(QString::fromStdString(i.name));
    const std::vector<QString> shown = distinguishingNames(names);
    for (std::size_t k = 0; k < names.size(); ++k) {
        const InitializerSummary &i = s.largestInitializers[k];
        inits.rows.push_back({names[k], locale.formattedDataSize(static_cast<qint64>(i.bytes)),
                              QVariant::fromValue<qulonglong>(i.bytes), shown[k]});
    }
    m_sections.push_back(std::move(inits));

    if (!warnings.empty()) {
        Section warn{tr("Warnings"), {}};
        for (const std::string &w : warnings)
            warn.rows.push_back({tr("warning"), QString::fromStdString(w), {}});
        m_sections.push_back(std::move(warn));
    }
    endResetModel();
}

std::vector<QString> ModelSummaryModel::distinguishingNames(const std::vector<QString> &names)
{
    std::vector<QStringList> parts;
    std::size_t depth = 0;
    for (const QString &n : names) {
        parts.push_back(n.split(QLatin1Char('/')));
        depth = std::max(depth, std::size_t(parts.back().size()));
    }
    // A position varies when the names do not all have the same segment there.
    std::vector<bool> varies(depth, false);
    for (std::size_t p = 0; p < depth; ++p)
        for (const QStringList &q : parts)
            if (q.size() <= qsizetype(p) || q[qsizetype(p)] != parts.front().value(qsizetype(p)))
                varies[p] = true;
    std::vector<QString> out;
    for (std::size_t k = 0; k < names.size(); ++k) {
        const QStringList &q = parts[k];
        if (names.size() < 2 || q.size() < 2) {
            out.push_back(names[k]);
            continue;
        }
        QStringList kept;
        bool gap = false;
        for (qsizetype p = 0; p < q.size(); ++p) {
            if (varies[std::size_t(p)] || p == q.size() - 1) {
                if (gap && !kept.isEmpty())
                    kept << QStringLiteral("…");
                kept << q[p];
                gap = false;
            } else {
                gap = true;
            }
        }
        out.push_back(kept.join(QLatin1Char('/')));
    }
    return out;
}

void ModelSummaryModel::clear()
{
    beginResetModel();
    m_sections.clear();
    endResetModel();
}

QModelIndex ModelSummaryModel::index(int row, int column, const QModelIndex &parent) const
{
    if (!hasIndex(row, column, parent))
        return {};
    if (!parent.isValid())
        return createIndex(row, column, sectionId);
    return createIndex(row, column, static_cast<quintptr>(parent.row()) + 1);
}

QModelIndex ModelSummaryModel::parent(const QModelIndex &child) const
{
    if (!child.isValid() || child.internalId() == sectionId)
        return {};
    return createIndex(static_cast<int>(child.internalId() - 1), 0, sectionId);
}

int ModelSummaryModel::rowCount(const QModelIndex &parent) const
{
    if (!parent.isValid())
        return static_cast<int>(m_sections.size());
    if (parent.internalId() == sectionId && parent.column() == 0)
        return static_cast<int>(m_sections[static_cast<std::size_t>(parent.row())].rows.size());
    return 0;
}

int ModelSummaryModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QVariant ModelSummaryModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    if (index.internalId() == sectionId) {
        if ((role == Qt::DisplayRole || role == SortValueRole) && index.column() == PropertyColumn)
            return m_sections[static_cast<std::size_t>(index.row())].title;
        return {};
    }
    const Row &row = m_sections[index.internalId() - 1].rows[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        if (index.column() == PropertyColumn && !row.shown.isEmpty())
            return row.shown;
        return index.column() == PropertyColumn ? row.property : row.value;
    case Qt::ToolTipRole: return index.column() == PropertyColumn ? row.property : row.value;
    case ElideModeRole:
        return index.column() == PropertyColumn && !row.shown.isEmpty() ? QVariant(int(Qt::ElideRight)) : QVariant();
    case SortValueRole:
        return index.column() == PropertyColumn
                   ? QVariant(row.property)
                   : (row.sortValue.isValid() ? row.sortValue : QVariant(row.value));
    default: return {};
    }
}

QVariant ModelSummaryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return section == PropertyColumn ? tr("Property") : tr("Value");
}

} // namespace opscope

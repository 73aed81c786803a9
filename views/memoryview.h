#pragma once
// The memory plan drawn as an arena map: x is the device's step, y the offset in its arena; each
// tensor a rectangle over the steps it lives and the bytes it occupies, coloured by its producer's
// op category (in-place outputs outlined darker, over the bytes of the input they overwrite). The
// moment the lower bound is reached is marked. Hover names the tensor; a click activates its
// producer (the main window selects it in the graph). MemoryPanel adds the per-device figures
// and a device chooser.

#include "ir/model.h"
#include "runtime/memoryplan.h"

#include <QWidget>
#include <map>
#include <memory>
#include <optional>

class QComboBox;
class QHBoxLayout;
class QLabel;
class QSpinBox;

namespace opscope {

class MemoryView : public QWidget
{
    Q_OBJECT
public:
    explicit MemoryView(QWidget *parent = nullptr);

    void setPlan(std::shared_ptr<const MemoryPlan> plan, std::shared_ptr<const Model> model, int device = 0);
    // What the empty chart says (by default how to get a plan; after a failed planning, what to try).
    void setPlaceholder(const QString &text);
    int device() const { return m_device; }
    // The tensor (index into the device's tensors) drawn under a widget position.
    std::optional<std::size_t> tensorAt(QPointF pos) const;
    QRectF tensorRect(std::size_t index) const; // widget coordinates; empty when not drawn
    double peakX() const;

    QSize sizeHint() const override { return {640, 240}; }
    QSize minimumSizeHint() const override { return {240, 120}; }

signals:
    void nodeActivated(const QString &name);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;

private:
    const DeviceMemory *deviceMemory() const;
    QRectF plotArea() const;
    double columnX(double column) const;
    std::uint64_t arenaBytes() const;
    QString describe(const PlannedTensor &t) const;

    std::shared_ptr<const MemoryPlan> m_plan;
    std::shared_ptr<const Model> m_model;
    QString m_placeholder;
    int m_device = 0;
    std::optional<std::size_t> m_hover;
    std::vector<bool> m_overwritten; // by tensor: an in-place output takes its bytes at its last step
    // Step → x column: only steps where an arena tensor starts or ends take width (Paddle exports
    // spend hundreds of steps on Constant nodes, which would squeeze the network into a corner).
    std::vector<int> m_column;
    int m_columns = 1;
};

class MemoryPanel : public QWidget
{
    Q_OBJECT
public:
    explicit MemoryPanel(QWidget *parent = nullptr);

    // `before`: the same model's plan before the pass step shown, to say what the step changed.
    // `subject`: which model this is, one line (loaded, a pass step, optimized as run runs it).
    void setPlan(std::shared_ptr<const MemoryPlan> plan, std::shared_ptr<const Model> model,
                 std::shared_ptr<const MemoryPlan> before = {}, const QString &subject = {});
    void setMessage(const QString &text); // "planning…", an error
    MemoryView *view() const { return m_view; }
    QString summaryText() const;
    const std::shared_ptr<const MemoryPlan> &plan() const { return m_plan; }
    const std::shared_ptr<const Model> &model() const { return m_model; }
    // Bytes of each node's outputs in the arena (in place and arena tensors, not views), by node
    // name: the graph's heat overlay.
    std::map<std::string, double> bytesPerNode() const;
    // The model's symbolic input dims, each with a size to plan for (kept while the names stay).
    void setSymbolicDims(const std::vector<std::string> &names);
    // The symbolic dims set in the dock (else those preset): the Values tab's runs use them too.
    std::map<std::string, std::int64_t> dims() const;
    // Sizes for dims of these names, now and whenever they appear (`opscope --dim`).
    void presetDims(const std::map<std::string, std::int64_t> &dims);
    // What to plan: the model on screen (its heat shows on the graph), or the loaded model
    // optimized as `run` and `opscope-cli memory` run it (level all), whose figures the CLI prints.
    bool plansAsRun() const;
    void setPlansAsRun(bool asRun);

signals:
    void nodeActivated(const QString &name);
    void planRequested(); // the Plan button

private:
    void showDevice(int device);

    QLabel *m_summary;
    QHBoxLayout *m_dimRow;
    std::vector<std::pair<std::string, QSpinBox *>> m_dims;
    std::map<std::string, std::int64_t> m_preset;
    QComboBox *m_devices;
    QComboBox *m_subject;
    QString m_subjectText;
    MemoryView *m_view;
    std::shared_ptr<const MemoryPlan> m_plan, m_before;
    std::shared_ptr<const Model> m_model;
};

} // namespace opscope

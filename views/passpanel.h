#pragma once
// The passes dock: pick a level and export target, toggle and reorder passes, run the pipeline,
// and step through its passes (each step shows BEFORE | AFTER in the graph panel).

#include "passlistmodel.h"

#include <QWidget>

class QComboBox;
class QPlainTextEdit;
class QLabel;
class QPushButton;
class QTableView;

namespace opscope {

class PassPanel : public QWidget
{
    Q_OBJECT
public:
    explicit PassPanel(QWidget *parent = nullptr);

    PassListModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }
    QString aboutText() const; // the "What does this pass do" panel
    QString level() const;
    void setLevel(const QString &level); // one of passes::levelNames(); others are ignored
    QString target() const;
    void setTarget(const QString &target); // onnx, ort or none; others are ignored
    bool overlay() const;
    void setOverlay(bool overlay); // as choosing "Overlay" in the mode box
    void setRunning(bool running);
    void setStatus(const QString &text);
    void setStepEnabled(bool previous, bool next);

signals:
    void runRequested(const std::vector<std::string> &passes, const QString &target);
    void cancelRequested();
    void stepPrevious();
    void stepNext();
    void rowActivated(int row);
    void originalVsFinal();
    void previousMatch();
    void nextMatch();
    void overlayToggled(bool overlay);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void reloadLevel();
    // The result columns that fit: on a narrow dock (1280×720) the time and match counts, then
    // whether the pass changed the graph (its row is bold then), give way to the pass names
    // ("const…", "redun…" beside four columns of numbers).
    void fitResultColumns();

    PassListModel *m_model;
    QTableView *m_table;
    QComboBox *m_level, *m_target, *m_mode;
    QPlainTextEdit *m_about = nullptr;
    QPushButton *m_run, *m_prev, *m_next, *m_up, *m_down, *m_final, *m_prevMatch, *m_nextMatch;
    QLabel *m_status;
    bool m_running = false;
};

} // namespace opscope

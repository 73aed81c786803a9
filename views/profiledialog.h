#pragma once
// "Profile…": schedules, devices, threads and iterations, and what the CLI's --dim and --input
// give — the model's symbolic dims bound to real sizes and input files (.npy/.pb). Dims left
// unbound run as 1, and the dialog says so: a detector profiled at 1×1 reported 1.9 ms where its
// real input takes 70 ms.

#include "ir/model.h"
#include "schedule/profiler.h"

#include <QDialog>
#include <map>
#include <memory>

class QCheckBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace opscope {

class ProfileDialog : public QDialog
{
    Q_OBJECT
public:
    explicit ProfileDialog(std::shared_ptr<const Model> model, QWidget *parent = nullptr);

    // What was chosen; input files are read here (a bad file is an error naming it).
    Expected<schedule::ProfileOptions> options() const;

    // For tests and scripted use.
    QSpinBox *dimBox(const std::string &symbol) const;
    QLineEdit *inputFile(const std::string &input) const;
    QString dimWarning() const; // unbound dims, and more workers than cores
    QSpinBox *devicesBox() const { return m_devices; }
    std::vector<std::string> symbols() const;

private:
    void updateWarning();

    std::shared_ptr<const Model> m_model;
    std::array<QCheckBox *, 5> m_schedules{}; // kScheduleNames
    QSpinBox *m_devices = nullptr, *m_threads = nullptr, *m_iterations = nullptr;
    QCheckBox *m_measured = nullptr, *m_allCores = nullptr;
    std::map<std::string, QSpinBox *> m_dims;
    std::map<std::string, QLineEdit *> m_inputs;
    QLabel *m_warning = nullptr;
};

} // namespace opscope

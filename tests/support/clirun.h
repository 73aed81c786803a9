#pragma once
// Running opscope-cli from a test: its exit code and both streams (tst_cli, tst_cliprofile).

#include "testsupport.h"

#include <QProcess>
#include <QString>
#include <QStringList>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace opscope::test::clirun {

struct Run
{
    int exitCode = -1; // -1: did not finish in 60 s, -2: crashed
    QString out;
    QString err;
};

inline Run cli(const QStringList &args)
{
    QProcess p;
    p.start(test::cliPath(), args);
    if (!p.waitForFinished(60000)) {
        p.kill();
        return {};
    }
    Run r;
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

inline QString sample(const char *name)
{
    return QString::fromStdString(test::samplePath(name).string());
}

inline std::string readFile(const std::filesystem::path &p)
{
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace opscope::test::clirun

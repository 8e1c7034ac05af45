#pragma once
// Runs the scaleacross CLI built with the tests and keeps what it printed.

#include <QProcess>
#include <QStringList>

#include <string>

namespace sa::testing {

struct CliRun {
    int code = -1; // exit code; -1 if it crashed or did not finish
    std::string out;
    std::string err;
};

inline CliRun runCli(const QStringList& args) {
    QProcess proc;
    proc.start(QStringLiteral(SCALEACROSS_CLI_PATH), args);
    CliRun r;
    if (!proc.waitForStarted(10000) || !proc.waitForFinished(120000)) {
        proc.kill();
        proc.waitForFinished();
        r.err = "did not finish: " + proc.errorString().toStdString();
        return r;
    }
    r.code = proc.exitStatus() == QProcess::NormalExit ? proc.exitCode() : -1;
    r.out = proc.readAllStandardOutput().toStdString();
    r.err = proc.readAllStandardError().toStdString();
    return r;
}

} // namespace sa::testing

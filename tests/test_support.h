#pragma once
// Shared by the tests: where the real worker and the adversarial kernels are, and file helpers.
#include <QFile>
#include <QString>
#include <string>

#include "protocol/messages.h"

namespace kforge::test {

inline std::string workerCommand()
{
#ifdef KFORGE_WORKER_PATH
    return std::string("'") + KFORGE_WORKER_PATH + "'";
#else
    return {};
#endif
}

inline QByteArray readAll(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll();
}

inline Candidate cpuKernel(const char *name)
{
    Candidate c;
    c.backend = "cpu";
    c.source = readAll(QStringLiteral(KFORGE_TEST_KERNELS "/cpu/") + QString::fromLatin1(name)).toStdString();
    return c;
}

} // namespace kforge::test

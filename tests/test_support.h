#pragma once
// Shared by the tests: where the real worker and the adversarial kernels are, and file helpers.
#include <QFile>
#include <QProcess>
#include <QString>
#include <string>

#include "ops/operator_card.h"
#include "proposers/template_library.h"
#include "protocol/messages.h"

namespace kforge::test {

// A template's point of each parameter's first value, and its start for a card: the seed, else that point.
inline nlohmann::json firstPoint(const KernelTemplate &t)
{
    nlohmann::json p = nlohmann::json::object();
    for (const auto &[k, values] : t.space)
        p[k] = values.front();
    return p;
}

inline nlohmann::json startPoint(const KernelTemplate &t, const OperatorCard &card)
{
    return t.seed ? t.seed(card) : firstPoint(t);
}

inline std::string workerCommand()
{
#ifdef KFORGE_WORKER_PATH
    return std::string("'") + KFORGE_WORKER_PATH + "'";
#else
    return {};
#endif
}

// A Python that imports torch ($KFORGE_PYTHON, python3, /usr/bin/python3), or "".
inline QString torchPython()
{
    QStringList tries;
    if (qEnvironmentVariableIsSet("KFORGE_PYTHON"))
        tries << qEnvironmentVariable("KFORGE_PYTHON");
    tries << QStringLiteral("python3") << QStringLiteral("/usr/bin/python3");
    for (const auto &py : tries) {
        QProcess p;
        p.start(py, {QStringLiteral("-c"), QStringLiteral("import torch")});
        if (p.waitForFinished(60000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0)
            return py;
    }
    return {};
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

// An operator no template covers, for the LLM proposer's tests: aten::hardsigmoid,
// min(max(x + 3, 0), 6) / 6.
inline OperatorCard hardsigmoidCard(int64_t rows, int64_t cols)
{
    OperatorCard c;
    c.key = "hardsigmoid.f32";
    c.family = "hardsigmoid";
    c.atenSchema = "aten::hardsigmoid(Tensor self) -> Tensor";
    c.atenOp = "aten::hardsigmoid";
    c.referenceArgs = nlohmann::json::array({{{"input", 0}}});
    c.shape = {{"rows", rows}, {"cols", cols}};
    c.heldOutShapes = {{{"rows", 7}, {"cols", cols + 3}}};
    c.inputs = {{"x", {"rows", "cols"}, DType::F32}};
    c.outputs = {{"y", {"rows", "cols"}, DType::F32}};
    c.errorModel = ErrorModel::Pointwise;
    c.flopsPerElement = 4;
    return c;
}

} // namespace kforge::test

#pragma once
// What the cost-model tests share: a GPT-style model built in code, a
// relative comparison that prints both numbers, and an evaluation that fails
// the current test with the evaluator's message.

#include "cost/evaluate.h"
#include "model/model.h"

#include "fixtures.h"

#include <QByteArray>
#include <QTest>

#include <cstdint>

namespace sa::testing {

inline QByteArray numbers(double got, double want) {
    return QByteArray("got ") + QByteArray::number(got, 'g', 17) + ", want " +
           QByteArray::number(want, 'g', 17);
}

// A GPT-style dense model: 16 layers, h = 4096, 32 heads (MHA), 4h GELU MLP.
inline Model gptModel(int layers = 16, std::int64_t hidden = 4096, int heads = 32, int kvHeads = 32,
                      std::int64_t vocab = 51200) {
    Model m;
    m.name = "gpt-small";
    m.layers = layers;
    m.hidden = hidden;
    m.ffn_hidden = 4 * hidden;
    m.heads = heads;
    m.kv_heads = kvHeads;
    m.vocab = vocab;
    m.mlp = MlpKind::Gelu;
    m.dtype = DType::BF16;
    m.tied_embeddings = false;
    return m;
}

// The evaluation of a scenario the test builds; one that fails stops the
// program with the evaluator's message (an input of the test, not what it
// checks).
inline Evaluation evaluated(const Scenario& sc) {
    const EvaluationResult r = evaluate(sc);
    if (const auto* e = std::get_if<EvaluationError>(&r))
        qFatal("evaluate failed: %s", e->str().c_str());
    return std::get<Evaluation>(r);
}

// Whether some warning of `ev` contains `part`.
inline bool hasWarning(const Evaluation& ev, const char* part) {
    for (const std::string& w : ev.warnings)
        if (w.find(part) != std::string::npos)
            return true;
    return false;
}

// The link (or tier edge) of `ev` named `name`; stops the program without one.
inline const LinkUsage& linkNamed(const Evaluation& ev, const std::string& name) {
    for (const LinkUsage& l : ev.links)
        if (l.name == name)
            return l;
    qFatal("no link %s", name.c_str());
}

} // namespace sa::testing

#define QVERIFY_CLOSE(got, want, rel)                                                              \
    QVERIFY2(sa::testing::closeRelative((got), (want), (rel)),                                     \
             sa::testing::numbers((got), (want)).constData())

// Evaluates or fails the current test with the evaluator's message.
#define EVALUATE(ev, sc)                                                                           \
    sa::Evaluation ev;                                                                             \
    do {                                                                                           \
        const sa::EvaluationResult r_ = sa::evaluate(sc);                                          \
        if (const auto* e_ = std::get_if<sa::EvaluationError>(&r_))                                \
            QFAIL(("evaluate failed: " + e_->str()).c_str());                                      \
        ev = std::get<sa::Evaluation>(r_);                                                         \
    } while (false)

// Optimizer results (`optimize --json`) read back as `scaleacross merge`
// reads them: written, read and written again they are the same text; an
// unknown key, a missing key, a value of the wrong type, a plan that is not
// a plan document or text that is not JSON is a message naming the file and
// the JSON path, and merge exits 2 on it.

#include "explore/results.h"
#include "formats/documents.h"

#include "../common/cli.h"
#include "../common/small_search.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <string>
#include <vector>

using namespace sa;
using namespace sa::testing;
using nlohmann::json;

namespace {

std::string written(const OptimizerResult& r) {
    return toJson(r).dump(2) + "\n"; // as `optimize --json` writes it
}

bool writeFile(const QString& path, const std::string& text) {
    return saveFileAtomically(path.toStdString(), text).empty();
}

std::string readFile(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll().toStdString() : std::string();
}

// A broken result: how it is made from a good one, and what the reader
// must say (at `path`, a message containing `message`).
struct BadCase {
    const char* name;
    std::function<std::string(const std::string& good)> make;
    std::string path;
    std::string message;
};

std::function<std::string(const std::string&)> edited(std::function<void(json&)> edit) {
    return [edit](const std::string& good) {
        json j = json::parse(good);
        edit(j);
        return j.dump(2) + "\n";
    };
}

const std::vector<BadCase>& badCases() {
    static const std::vector<BadCase> cases = {
        {"unknown key", edited([](json& j) { j["counts"]["evaluatd"] = 1; }), "/counts",
         "unknown key 'evaluatd' (did you mean 'evaluated'?)"},
        {"unknown key in a scored plan", edited([](json& j) { j["top"][0]["rank"] = 1; }), "/top/0",
         "unknown key 'rank'"},
        {"unknown key in a plan document",
         edited([](json& j) { j["pareto"][0]["plan"]["colour"] = "red"; }), "/pareto/0/plan",
         "unknown key 'colour'"},
        {"missing key", edited([](json& j) { j["top"][0].erase("label"); }), "/top/0",
         "missing required key 'label'"},
        {"missing object", edited([](json& j) { j.erase("shard"); }), "",
         "missing required key 'shard'"},
        {"missing key in a baseline", edited([](json& j) { j["baselines"][1].erase("plan"); }),
         "/baselines/1", "missing required key 'plan'"},
        {"wrong type: string for an integer", edited([](json& j) { j["shard"]["index"] = "zero"; }),
         "/shard/index", "must be a non-negative integer, got 'zero'"},
        {"wrong type: string for a number",
         edited([](json& j) { j["top"][0]["step_time_s"] = "fast"; }), "/top/0/step_time_s",
         "must be a number >= 0, got 'fast'"},
        {"wrong type: number for a boolean",
         edited([](json& j) { j["baselines"][0]["feasible"] = 1; }), "/baselines/0/feasible",
         "must be true or false, got 1"},
        {"wrong type: string for an array",
         edited([](json& j) { j["strategy"]["enumerated_axes"] = "tp"; }),
         "/strategy/enumerated_axes", "must be an array, got 'tp'"},
        {"wrong type: number in a list of names",
         edited([](json& j) { j["strategy"]["enumerated_axes"][0] = 7; }),
         "/strategy/enumerated_axes/0", "must be a string, got 7"},
        {"wrong type: object for a list", edited([](json& j) { j["top"] = json::object(); }),
         "/top", "must be an array, got an object"},
        {"wrong type: fraction for a choice index",
         edited([](json& j) { j["top"][0]["key"]["choice"][0] = 0.5; }), "/top/0/key/choice/0",
         "must be an integer from 0 to 65535, got 0.5"},
        {"wrong type in a plan document",
         edited([](json& j) { j["top"][0]["plan"]["parallelism"]["tp"] = "2"; }),
         "/top/0/plan/parallelism/tp", "got '2'"},
        {"unknown key in a baseline's run",
         edited([](json& j) { j["baselines"][0]["run"]["speed"] = 1; }), "/baselines/0/run",
         "unknown key 'speed'"},
        {"wrong type in a baseline's run",
         edited([](json& j) { j["baselines"][1]["run"]["cost"] = "cheap"; }),
         "/baselines/1/run/cost", "must be a number >= 0, got 'cheap'"},
        {"wrong type: speedup", edited([](json& j) { j["baselines"][0]["speedup"] = "10%"; }),
         "/baselines/0/speedup", "must be a number or null, got '10%'"},
        {"unknown objective", edited([](json& j) { j["objective"] = "speed"; }), "/objective",
         "must be one of step-time, cost, cross-building-bytes, time-to-tokens, time-to-loss, "
         "energy, got 'speed'"},
        {"another format", edited([](json& j) { j["format"] = "scaleacross.plan"; }), "/format",
         "must be 'scaleacross.optimizer-result', got 'scaleacross.plan'"},
        {"another version", edited([](json& j) { j["version"] = 3; }), "/version",
         "unsupported version 3"},
        {"pruned total not the sum", edited([](json& j) {
             j["counts"]["pruned_total"] = j["counts"]["pruned_total"].get<std::int64_t>() + 1;
         }),
         "/counts/pruned_total", "must be the sum of /counts/pruned"},
        {"shard index past the count", edited([](json& j) { j["shard"]["index"] = 1; }),
         "/shard/index", "must be less than /shard/count (1), got 1"},
        {"truncated JSON", [](const std::string& good) { return good.substr(0, good.size() / 2); },
         "", "invalid JSON at line"},
        {"duplicate key",
         [](const std::string& good) {
             std::string t = good;
             t.insert(t.find('{') + 1, "\n  \"threads\": 3,");
             return t;
         },
         "", "duplicate key 'threads'"},
        {"not an object", [](const std::string&) { return std::string("[1, 2]\n"); }, "",
         "must be an object, got an array"},
    };
    return cases;
}

} // namespace

class TestResults : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void roundTripIsIdentical();
    void cliResultRoundTrip();
    void baselineRunRoundTrips();
    void badResults_data();
    void badResults();
    void unreadableFile();

private:
    OptimizerResult result_;
    std::string text_;
};

void TestResults::initTestCase() {
    const Cluster cluster = smallCluster(true);
    const Evaluator evaluator(cluster);
    OptimizerOptions o;
    o.space = smallSpace();
    o.max_evaluations = 300;
    o.seeds = 2;
    o.threads = 2;
    result_ = optimize(evaluator, smallModel(), basePlan(128), o);
    QVERIFY(!result_.top.empty());
    QVERIFY(!result_.pareto.empty());
    QCOMPARE(result_.baselines.size(), std::size_t(5));
    QVERIFY(!result_.pruned.empty());
    QCOMPARE(result_.shard_count, 1);
    text_ = written(result_);
}

void TestResults::roundTripIsIdentical() {
    const auto back = parseOptimizerResult(text_, "result.json");
    QVERIFY2(back.ok(), problemsText(back.problems).c_str());
    QCOMPARE(written(*back.value), text_);
    // And the values themselves, not only their text.
    const OptimizerResult& r = *back.value;
    QCOMPARE(r.top.size(), result_.top.size());
    for (std::size_t i = 0; i < r.top.size(); ++i) {
        QVERIFY(r.top[i].key == result_.top[i].key);
        QVERIFY(r.top[i].plan == result_.top[i].plan);
        QCOMPARE(r.top[i].step_time_s, result_.top[i].step_time_s);
        QCOMPARE(r.top[i].label, result_.top[i].label);
    }
    QVERIFY(r.pruned == result_.pruned);
    QCOMPARE(r.baselines.size(), result_.baselines.size());
    QVERIFY(r.baselines[1].plan == result_.baselines[1].plan);
    QCOMPARE(r.strategy.enumerated_axes, result_.strategy.enumerated_axes);
    QCOMPARE(r.input_digest, result_.input_digest);
    QCOMPARE(r.evaluations_per_s, result_.evaluations_per_s);
}

void TestResults::cliResultRoundTrip() {
    // What `optimize --json` writes reads back and writes the same bytes;
    // `merge` takes it (one shard of one).
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString out = dir.filePath(QStringLiteral("result.json"));
    const CliRun r = runCli({QStringLiteral("optimize"),
                             QStringLiteral(SCALEACROSS_SOURCE_DIR
                                            "/sample_clusters/scenarios/two-buildings-405b.json"),
                             QStringLiteral("--threads"), QStringLiteral("2"),
                             QStringLiteral("--max-evaluations"), QStringLiteral("4000"),
                             QStringLiteral("--json"), QStringLiteral("-o"), out});
    QVERIFY2(r.code == 0, r.err.c_str());
    const std::string text = readFile(out);
    const auto back = loadOptimizerResultFile(out.toStdString());
    QVERIFY2(back.ok(), problemsText(back.problems).c_str());
    QVERIFY(!back.value->top.empty());
    QCOMPARE(written(*back.value), text);
    const CliRun m = runCli({QStringLiteral("merge"), out, QStringLiteral("--json")});
    QVERIFY2(m.code == 0, m.err.c_str());
    const auto merged = parseOptimizerResult(m.out, "merged.json");
    QVERIFY2(merged.ok(), problemsText(merged.problems).c_str());
    QCOMPARE(merged.value->top.front().step_time_s, back.value->top.front().step_time_s);
}

void TestResults::baselineRunRoundTrips() {
    // Each baseline's run is written as a searched plan's is ...
    const json j = json::parse(text_);
    QCOMPARE(j["baselines"].size(), result_.baselines.size());
    bool someRun = false;
    for (std::size_t i = 0; i < result_.baselines.size(); ++i) {
        const BaselineResult& b = result_.baselines[i];
        const json& run = j["baselines"][i]["run"];
        QCOMPARE(run.size(), j["top"][0]["run"].size());
        QCOMPARE(run["time_to_tokens_s"].get<double>(), b.run.time_to_tokens_s);
        QCOMPARE(run["time_to_loss_s"].get<double>(), b.run.time_to_loss_s);
        QCOMPARE(run["cost"].get<double>(), b.run.cost);
        QCOMPARE(run["energy_kwh"].get<double>(), b.run.energy_kwh);
        QCOMPARE(run["goodput"].get<double>(), b.run.goodput);
        someRun = someRun || (b.feasible && b.run.time_to_tokens_s > 0 && b.run.cost > 0);
    }
    QVERIFY(someRun);
    // ... and read back.
    const auto back = parseOptimizerResult(text_, "result.json");
    QVERIFY2(back.ok(), problemsText(back.problems).c_str());
    for (std::size_t i = 0; i < result_.baselines.size(); ++i)
        QVERIFY(back.value->baselines[i].run == result_.baselines[i].run);
    // A result written before baselines had a run still loads (no run: the
    // defaults), and so does a plan without one.
    json old = j;
    for (json& b : old["baselines"])
        b.erase("run");
    old["top"][0].erase("run");
    const auto older = optimizerResultFromJson(old, "old.json");
    QVERIFY2(older.ok(), problemsText(older.problems).c_str());
    QVERIFY(older.value->baselines[1].run == RunScores{});
    QVERIFY(older.value->top[0].run == RunScores{});
    QCOMPARE(older.value->baselines[1].step_time_s, result_.baselines[1].step_time_s);
}

void TestResults::badResults_data() {
    QTest::addColumn<int>("index");
    for (std::size_t i = 0; i < badCases().size(); ++i)
        QTest::newRow(badCases()[i].name) << int(i);
}

void TestResults::badResults() {
    QFETCH(int, index);
    const BadCase& c = badCases()[std::size_t(index)];
    const std::string bad = c.make(text_);
    QVERIFY(bad != text_);

    // The reader: no value, and a problem at the path with the message.
    const auto loaded = parseOptimizerResult(bad, "shard-0.json");
    QVERIFY(!loaded.ok());
    QVERIFY(!loaded.value);
    bool found = false;
    for (const Diagnostic& p : loaded.problems) {
        QCOMPARE(p.file, std::string("shard-0.json"));
        found = found || (p.path == c.path && p.message.find(c.message) != std::string::npos);
    }
    QVERIFY2(found,
             ("expected " + c.path + ": " + c.message + "\ngot:\n" + problemsText(loaded.problems))
                 .c_str());

    // `scaleacross merge`: exit 2, the same message with the file's path.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString file = dir.filePath(QStringLiteral("shard-0.json"));
    QVERIFY(writeFile(file, bad));
    const CliRun r = runCli({QStringLiteral("merge"), file, QStringLiteral("--json")});
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.empty());
    const std::string expected = file.toStdString() + ": " + (c.path.empty() ? "" : c.path + ": ");
    QVERIFY2(r.err.find(expected) != std::string::npos, r.err.c_str());
    QVERIFY2(r.err.find(c.message) != std::string::npos, r.err.c_str());
}

void TestResults::unreadableFile() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string missing = dir.filePath(QStringLiteral("nothing.json")).toStdString();
    const auto loaded = loadOptimizerResultFile(missing);
    QVERIFY(!loaded.ok());
    QCOMPARE(loaded.problems.size(), std::size_t(1));
    QCOMPARE(loaded.problems.front().file, missing);
    const CliRun r = runCli({QStringLiteral("merge"), QString::fromStdString(missing)});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.find(missing) != std::string::npos, r.err.c_str());
}

QTEST_GUILESS_MAIN(TestResults)
#include "tst_results.moc"

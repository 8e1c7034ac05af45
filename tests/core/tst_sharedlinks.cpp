// Links shared with other traffic: a link's background_gbps (inelastic
// cross traffic the job's transfers get the rest of), and several jobs on
// one cluster whose traffic is background for each other (core/cost/jobs.h).
// Expected rates are worked out here from the transport formulas.

#include "cost/evaluate.h"
#include "cost/jobs.h"
#include "cost/network.h"
#include "cost/traffic.h"
#include "export/evaluation_json.h"
#include "topology/topology.h"

#include "../common/costmodel_checks.h"
#include "../common/fixtures.h"

#include <QTest>

#include <nlohmann/json.hpp>

using namespace sa;
using namespace sa::testing;

namespace {

// B1 - B2 - B3 - B4 in a line, 32 GPUs each, 100 Gbit/s links of 5 ms.
Cluster line4(double backgroundB1B2 = 0) {
    Cluster c = clusterOf(
        "line", {building("B1", 32), building("B2", 32), building("B3", 32), building("B4", 32)},
        {link("B1", "B2", 100, 5), link("B2", "B3", 100, 5), link("B3", "B4", 100, 5)});
    c.links[0].background_gbps = backgroundB1B2;
    return c;
}

// tp 8 x pp 2 x dp 2 (32 GPUs): stage 0 in `first`, stage 1 in `second`.
Plan twoStagePlan(const std::string& first, const std::string& second) {
    Plan p = makePlan(8, 2, 2, 32);
    p.placement = Placement{};
    p.placement->runs = {{0, 0, 0, 1, first}, {1, 1, 0, 1, second}};
    return p;
}

Evaluation evaluated(const Cluster& c, const Plan& p) {
    const EvaluationResult r = sa::evaluate(Scenario{c, gptModel(), p});
    if (const auto* e = std::get_if<EvaluationError>(&r))
        qFatal("evaluate failed: %s", e->str().c_str());
    return std::get<Evaluation>(r);
}

const LinkUsage* usage(const Evaluation& ev, const std::string& name) {
    for (const LinkUsage& l : ev.links)
        if (l.name == name)
            return &l;
    return nullptr;
}

JobsEvaluation jobsOf(const Cluster& c, const std::vector<Job>& jobs) {
    JobsResult r = evaluateJobs(c, jobs);
    if (const auto* e = std::get_if<EvaluationError>(&r))
        qFatal("evaluateJobs failed: %s", e->str().c_str());
    return std::get<JobsEvaluation>(std::move(r));
}

} // namespace

class TestSharedLinks : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rateWithBackground();
    void backgroundSlowsOnlyPlansCrossingIt();
    void linkUsageReportsBackground();
    void jobsSeeEachOthersTraffic();
    void jobsFixedPoint();
    void oneJobIsAlone();
    void jobsNeedTheirOwnGpus();
};

// rateBps on the link: min(line minus background x efficiency, connections x
// flows x window / RTT). roce: efficiency 0.92, 2 MiB window, 4 QPs per
// transfer; RTT = 2 x 1 ms + 10 us.
void TestSharedLinks::rateWithBackground() {
    Cluster c =
        clusterOf("two", {building("B1", 32), building("B2", 32)}, {link("B1", "B2", 1000, 1)});
    c.links[0].background_gbps = 300;
    const Topology topo(c);
    const std::vector<EdgeTransport> tr = edgeTransports(c, topo, Plan{});
    int edge = -1;
    for (const TopoEdge& e : topo.edges())
        if (e.kind == EdgeKind::InterBuilding)
            edge = e.id;
    QVERIFY(edge >= 0);
    QCOMPARE(tr[std::size_t(edge)].background_gbps[0], 300.0);
    QCOMPARE(tr[std::size_t(edge)].background_gbps[1], 300.0);
    const double rtt = 2 * 1e-3 + 10e-6;
    const double perFlow = 2.0 * 1024 * 1024 / rtt; // 1.0434e9 B/s

    // 100 transfers x 4 flows fill what is left: 700 Gbit/s x 0.92.
    TrafficPhase many(topo, tr);
    many.add({0, 0}, {1, 0}, 1e9, 100);
    QVERIFY_CLOSE(many.rateBps(edge, 0), 700e9 / 8 * 0.92, 1e-12);
    QVERIFY_CLOSE(many.drainTime(), 1e9 / (700e9 / 8 * 0.92), 1e-12);
    many.add({1, 0}, {0, 0}, 1e9, 100); // the background is there each direction
    QVERIFY_CLOSE(many.rateBps(edge, 1), 700e9 / 8 * 0.92, 1e-12);

    // One transfer is window-limited (4 x 1.04 GB/s = 33 Gbit/s): the
    // background leaves it 644 Gbit/s, more than it can use.
    TrafficPhase one(topo, tr);
    one.add({0, 0}, {1, 0}, 1e9, 1);
    QVERIFY_CLOSE(one.rateBps(edge, 0), 4 * perFlow, 1e-12);

    // Background 990 of 1000: 10 Gbit/s x 0.92 left, below the window limit.
    c.links[0].background_gbps = 990;
    const std::vector<EdgeTransport> tr2 = edgeTransports(c, topo, Plan{});
    TrafficPhase squeezed(topo, tr2);
    squeezed.add({0, 0}, {1, 0}, 1e9, 1);
    QVERIFY_CLOSE(squeezed.rateBps(edge, 0), 10e9 / 8 * 0.92, 1e-9);
    // The same drain with another phase's bytes sharing the edge.
    TrafficPhase other(topo, tr2);
    other.add({0, 0}, {1, 0}, 3e9, 1);
    QVERIFY_CLOSE(squeezed.drainTimeWith(other, 1.0), 4e9 / (10e9 / 8 * 0.92), 1e-9);
}

void TestSharedLinks::backgroundSlowsOnlyPlansCrossingIt() {
    const Cluster clean = line4(), busy = line4(80);
    // Crosses B1-B2 (its pipeline boundary): slower with 80 of 100 Gbit/s taken.
    const Evaluation a0 = evaluated(clean, twoStagePlan("B1", "B2"));
    const Evaluation a1 = evaluated(busy, twoStagePlan("B1", "B2"));
    QVERIFY2(a1.step_time_s > a0.step_time_s, numbers(a1.step_time_s, a0.step_time_s));
    QVERIFY(a1.breakdown.pp_exposed_s > a0.breakdown.pp_exposed_s);
    // Crosses B3-B4 only: bit for bit the same.
    const Evaluation b0 = evaluated(clean, twoStagePlan("B3", "B4"));
    const Evaluation b1 = evaluated(busy, twoStagePlan("B3", "B4"));
    QCOMPARE(b1.step_time_s, b0.step_time_s);
    QCOMPARE(b1.mfu, b0.mfu);
    QCOMPARE(b1.breakdown.pp_exposed_s, b0.breakdown.pp_exposed_s);
    QCOMPARE(b1.cross_building_bytes, b0.cross_building_bytes);
    QCOMPARE(b1.warnings, b0.warnings);
    QCOMPARE(b1.links.size(), b0.links.size());
    for (std::size_t i = 0; i < b0.links.size(); ++i) {
        QCOMPARE(b1.links[i].busy_s, b0.links[i].busy_s);
        QCOMPARE(b1.links[i].utilization, b0.links[i].utilization);
    }
}

void TestSharedLinks::linkUsageReportsBackground() {
    const Evaluation ev = evaluated(line4(80), twoStagePlan("B1", "B2"));
    const LinkUsage* l = usage(ev, "B1-B2");
    QVERIFY(l);
    QVERIFY(l->bytes_per_step > 0);
    QCOMPARE(l->background_gbps, 80.0);
    QCOMPARE(l->utilization, l->bytes_per_step / (100e9 / 8 * ev.step_time_s));
    QCOMPARE(l->total_utilization, std::min(1.0, l->utilization + 0.8));
    QCOMPARE(l->total_peak_utilization, std::min(1.0, l->peak_utilization + 0.8));
    QVERIFY(l->peak_utilization <= 0.2 + 1e-12); // the job gets at most what is left
    const LinkUsage* far = usage(ev, "B3-B4");
    QVERIFY(far);
    QCOMPARE(far->background_gbps, 0.0);
    QCOMPARE(far->total_utilization, far->utilization);

    // JSON: the three keys on the link with background only.
    const nlohmann::json j = evaluationToJson(ev, false);
    for (const auto& link : j["links"]) {
        const bool withBackground = link["name"] == "B1-B2";
        QCOMPARE(link.contains("background_gbps"), withBackground);
        QCOMPARE(link.contains("total_utilization"), withBackground);
        QCOMPARE(link.contains("total_peak_utilization"), withBackground);
        if (withBackground)
            QCOMPARE(link["background_gbps"].get<double>(), 80.0);
    }
    // A link without background leaves the JSON as it was.
    const nlohmann::json clean = evaluationToJson(evaluated(line4(), twoStagePlan("B1", "B2")));
    for (const auto& link : clean["links"])
        QVERIFY(!link.contains("background_gbps"));
}

// A and B both run B1 -> B2 (16 GPUs each per building), C runs B3 -> B4.
void TestSharedLinks::jobsSeeEachOthersTraffic() {
    const Cluster c = line4();
    const Model m = gptModel();
    const JobsEvaluation r = jobsOf(c, {{"a", m, twoStagePlan("B1", "B2")},
                                        {"b", m, twoStagePlan("B1", "B2")},
                                        {"c", m, twoStagePlan("B3", "B4")}});
    QCOMPARE(r.jobs.size(), std::size_t(3));
    QVERIFY(r.converged);
    QVERIFY(r.iterations >= 2);
    const double alone = evaluated(c, twoStagePlan("B1", "B2")).step_time_s;
    QCOMPARE(r.jobs[0].alone.step_time_s, alone);
    for (int j : {0, 1})
        QVERIFY2(r.jobs[std::size_t(j)].shared.step_time_s > alone,
                 numbers(r.jobs[std::size_t(j)].shared.step_time_s, alone));
    // Same plans, same place in the order of sharing aside: the same time.
    QVERIFY_CLOSE(r.jobs[1].shared.step_time_s, r.jobs[0].shared.step_time_s, 1e-5);
    // C shares no link with them: unchanged, bit for bit.
    QCOMPARE(r.jobs[2].shared.step_time_s, r.jobs[2].alone.step_time_s);
    QCOMPARE(r.jobs[2].gpus_per_building, (std::vector<std::int64_t>{0, 0, 16, 16}));

    // Shared links: B1/uplink, B1-B2, B2/uplink for a and b; B3's, B3-B4, B4's for c.
    QStringList names;
    for (const SharedLink& s : r.links)
        names << QString::fromStdString(s.name);
    QCOMPARE(names,
             (QStringList{"B1/uplink", "B2/uplink", "B3/uplink", "B4/uplink", "B1-B2", "B3-B4"}));
    for (const SharedLink& s : r.links) {
        const bool ab = s.name == "B1-B2" || s.name == "B1/uplink" || s.name == "B2/uplink";
        QCOMPARE(s.job_gbps[0][0] > 0, ab);
        QCOMPARE(s.job_gbps[1][0] > 0, ab);
        QCOMPARE(s.job_gbps[2][0] > 0, !ab);
        if (s.name == "B1-B2") {
            // The mean rate: bytes per step x 8 / step time, each direction.
            const LinkUsage* l = usage(r.jobs[0].shared, "B1-B2");
            QVERIFY_CLOSE(s.job_gbps[0][0],
                          l->direction_bytes_per_step[0] * 8 / r.jobs[0].shared.step_time_s / 1e9,
                          1e-12);
            QVERIFY(s.job_gbps[0][0] + s.job_gbps[1][0] < 100);
            // a sees b's rate as background on it.
            QVERIFY_CLOSE(l->background_gbps, s.job_gbps[1][0], 1e-5);
        }
    }
}

// The shared result is a fixed point: a evaluated on its own with b's shared
// mean rates as background gives a's shared step time (and vice versa).
void TestSharedLinks::jobsFixedPoint() {
    const Cluster c = line4(30);
    const Model m = gptModel();
    const std::vector<Job> jobs = {{"a", m, twoStagePlan("B1", "B2")},
                                   {"b", m, twoStagePlan("B1", "B2")}};
    const JobsEvaluation r = jobsOf(c, jobs);
    QVERIFY(r.converged);
    const Evaluator evaluator(c);
    for (std::size_t j = 0; j < 2; ++j) {
        const Evaluation& other = r.jobs[1 - j].shared;
        EvaluateOptions o;
        o.timeline = false;
        o.background_gbps.assign(evaluator.topology().edges().size() * 2, 0.0);
        for (const LinkUsage& l : other.links) {
            if (l.tier == LinkTier::ZoneUplink)
                continue;
            for (int dir = 0; dir < 2; ++dir)
                o.background_gbps[std::size_t(l.edge) * 2 + std::size_t(dir)] =
                    l.direction_bytes_per_step[dir] * 8 / other.step_time_s / 1e9;
        }
        const EvaluationResult again = evaluator.evaluate(m, jobs[j].plan, o);
        QVERIFY(std::holds_alternative<Evaluation>(again));
        QVERIFY_CLOSE(std::get<Evaluation>(again).step_time_s, r.jobs[j].shared.step_time_s, 1e-5);
        // And the link's own 30 Gbit/s is under both.
        QVERIFY(usage(r.jobs[j].shared, "B1-B2")->background_gbps > 30);
        QCOMPARE(usage(r.jobs[j].alone, "B1-B2")->background_gbps, 30.0);
    }
}

void TestSharedLinks::oneJobIsAlone() {
    const Cluster c = line4(50);
    const JobsEvaluation r = jobsOf(c, {{"a", gptModel(), twoStagePlan("B1", "B2")}});
    QCOMPARE(r.iterations, 0);
    QCOMPARE(r.jobs[0].shared.step_time_s, r.jobs[0].alone.step_time_s);
    QCOMPARE(r.jobs[0].alone.step_time_s, evaluated(c, twoStagePlan("B1", "B2")).step_time_s);
}

void TestSharedLinks::jobsNeedTheirOwnGpus() {
    const Cluster c = line4();
    const Model m = gptModel();
    Plan big = makePlan(8, 2, 4, 32); // 64 GPUs: 32 in B1, 32 in B2
    big.placement = Placement{};
    big.placement->runs = {{0, 0, 0, 3, "B1"}, {1, 1, 0, 3, "B2"}};
    const JobsResult r =
        evaluateJobs(c, {{"first.json", m, big}, {"second.json", m, twoStagePlan("B1", "B3")}});
    const auto* err = std::get_if<EvaluationError>(&r);
    QVERIFY(err);
    QCOMPARE(QString::fromStdString(err->str()),
             QString("second.json: /placement: building 'B1' has 32 GPUs; this job takes 16 of "
                     "them and the other jobs (first.json 32) 32: place the jobs on GPUs of their "
                     "own (plan placement)"));
}

QTEST_GUILESS_MAIN(TestSharedLinks)
#include "tst_sharedlinks.moc"

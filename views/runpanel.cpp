#include "runpanel.h"

#include "units.h"

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace sa::views {

namespace {

QString number(double v, int decimals) {
    return QLocale().toString(v, 'f', decimals);
}

// "1.5T", "820B", "12.3M" tokens.
QString formatTokens(double n) {
    const double a = std::fabs(n);
    if (a >= 1e12)
        return QStringLiteral("%1 T").arg(number(n / 1e12, 2));
    if (a >= 1e9)
        return QStringLiteral("%1 B").arg(number(n / 1e9, 1));
    if (a >= 1e6)
        return QStringLiteral("%1 M").arg(number(n / 1e6, 1));
    return number(n, 0);
}

} // namespace

RunPanel::RunPanel(QWidget* parent)
    : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    note_ = new QLabel(this);
    note_->setObjectName(QStringLiteral("runNote"));
    note_->setWordWrap(true);
    layout->addWidget(note_);
    tree_ = new QTreeWidget(this);
    tree_->setObjectName(QStringLiteral("runTree"));
    tree_->setColumnCount(2);
    tree_->setHeaderLabels({QStringLiteral("Figure"), QStringLiteral("Value")});
    tree_->setRootIsDecorated(false);
    tree_->setAlternatingRowColors(true);
    tree_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    tree_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    tree_->header()->setStretchLastSection(true);
    layout->addWidget(tree_, 1);
    clear(QStringLiteral("No plan"));
}

void RunPanel::clear(const QString& why) {
    tree_->clear();
    note_->setText(why);
    note_->show();
}

QTreeWidgetItem* RunPanel::group(const QString& title) {
    auto* item = new QTreeWidgetItem(tree_, {title});
    QFont f = item->font(0);
    f.setBold(true);
    item->setFont(0, f);
    item->setFirstColumnSpanned(true);
    item->setExpanded(true);
    item->setFlags(Qt::ItemIsEnabled);
    return item;
}

void RunPanel::row(QTreeWidgetItem* parent, const QString& figure, const QString& value,
                   const QString& toolTip) {
    auto* item = new QTreeWidgetItem(parent, {figure, value});
    if (!toolTip.isEmpty()) {
        item->setToolTip(0, toolTip);
        item->setToolTip(1, toolTip);
    }
}

QString RunPanel::value(const QString& groupTitle, const QString& figure) const {
    for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
        const QTreeWidgetItem* g = tree_->topLevelItem(i);
        if (g->text(0) != groupTitle)
            continue;
        for (int k = 0; k < g->childCount(); ++k)
            if (g->child(k)->text(0) == figure)
                return g->child(k)->text(1);
    }
    return {};
}

void RunPanel::setEvaluation(const Evaluation* e, const Plan& plan) {
    if (!e) {
        clear(QStringLiteral("The plan cannot be evaluated: no run figures."));
        return;
    }
    tree_->setUpdatesEnabled(false);
    tree_->clear();
    const GoodputReport& g = e->goodput;
    const CostReport& c = e->cost;

    QStringList notes;
    if (!c.priced)
        notes << QStringLiteral("No prices in the cluster: set $/GPU-hour per building and $/GB "
                                "per link in the inspector for dollar figures.");
    if (!(plan.token_budget > 0))
        notes << QStringLiteral("No token budget: set one in the inspector (Run) for the run's "
                                "totals.");
    note_->setText(notes.join(QLatin1Char(' ')));
    note_->setVisible(!notes.isEmpty());

    QTreeWidgetItem* gp = group(QStringLiteral("Goodput"));
    row(gp, QStringLiteral("Goodput"), formatPercent(g.goodput),
        QStringLiteral("Useful training time over wall-clock time (docs/RUN.md)"));
    row(gp, QStringLiteral("Job MTBF"), formatDuration(g.job_mtbf_s),
        QStringLiteral("Mean time between interruptions of the whole job, from every GPU's "
                       "and host's MTBF"));
    row(gp, QStringLiteral("Checkpoint"), formatBytes(g.checkpoint_bytes),
        QStringLiteral("Weights and optimizer state"));
    row(gp, QStringLiteral("Checkpoint write"), formatSeconds(g.checkpoint_write_s),
        QStringLiteral("The slowest building's write to its storage"));
    row(gp, QStringLiteral("Step waits per checkpoint"), formatSeconds(g.checkpoint_blocking_s),
        plan.checkpoint.async ? QStringLiteral("Async: the copy to host memory")
                              : QStringLiteral("The whole write (set async to overlap it)"));
    row(gp, QStringLiteral("Checkpoint interval"),
        g.interval_steps > 0
            ? QStringLiteral("%1 %2 (%3)%4")
                  .arg(formatCount(g.interval_steps),
                       g.interval_steps == 1 ? QStringLiteral("step") : QStringLiteral("steps"),
                       formatDuration(g.interval_s),
                       g.interval_optimal ? QStringLiteral(", Young/Daly") : QString())
            : QStringLiteral("never (no failures)"));
    row(gp, QStringLiteral("Restart"), formatDuration(g.restart_s),
        QStringLiteral("Detect, reschedule, re-initialise and read the checkpoint"));
    row(gp, QStringLiteral("Lost per failure"), formatDuration(g.lost_per_failure_s),
        QStringLiteral("The restart and the expected rework since the last checkpoint"));
    row(gp, QStringLiteral("Stragglers per step"), formatSeconds(g.straggler_s),
        QStringLiteral("What a step waits for its slowest GPU (straggler slowdown, jitter)"));
    for (const auto& d : e->degraded_steps)
        row(gp, QStringLiteral("Degraded %1").arg(QString::fromStdString(d.link)),
            QStringLiteral("%1 of the time: step %2, +%3 per step")
                .arg(formatPercent(d.fraction), formatStepTime(d.step_time_s),
                     formatSeconds(d.fraction * std::max(0.0, d.step_time_s - e->step_time_s))),
            QStringLiteral("The step while the link runs at its degraded bandwidth, weighted by "
                           "the share of the time it does"));

    QTreeWidgetItem* step = group(QStringLiteral("Per step"));
    row(step, QStringLiteral("Step"), formatStepTime(e->step_time_s));
    row(step, QStringLiteral("Wall-clock step"),
        formatStepTime(e->step_time_s + g.straggler_s + g.degraded_links_s),
        QStringLiteral("With stragglers and degraded links (failures and checkpoints are in "
                       "goodput)"));
    if (c.priced) {
        row(step, QStringLiteral("Cost"), formatUsd(c.cost_usd_per_step));
        row(step, QStringLiteral("Transport"), formatUsd(c.transport_usd_per_step),
            QStringLiteral("Bytes over priced links at their $/GB"));
    }
    row(step, QStringLiteral("Energy"), formatEnergyKwh(c.energy_kwh_per_step));
    row(step, QStringLiteral("GPU power"),
        QStringLiteral("%1 W per GPU").arg(number(c.gpu_power_w, 0)),
        QStringLiteral("Idle + (limit − idle) × the modelled busy fraction"));
    row(step, QStringLiteral("Facility power"),
        QStringLiteral("%1 MW").arg(number(c.facility_power_kw / 1000, 2)),
        QStringLiteral("GPUs, hosts and network, times PUE"));
    if (std::isinf(c.time_s_per_mtok)) {
        // Goodput 0: no token is ever kept, so nothing per token is finite.
        QTreeWidgetItem* mt = group(QStringLiteral("Per million tokens"));
        row(mt, QStringLiteral("Wall clock"), formatDuration(c.time_s_per_mtok),
            QStringLiteral("Goodput 0: the job fails before a step and its checkpoint complete"));
    } else if (c.time_s_per_mtok > 0) {
        // The core's (core/cost/run.cpp): the run's figures per 10^6 tokens.
        QTreeWidgetItem* mt = group(QStringLiteral("Per million tokens"));
        if (c.priced)
            row(mt, QStringLiteral("Cost"), formatUsd(c.usd_per_mtok));
        row(mt, QStringLiteral("Energy"), formatEnergyKwh(c.kwh_per_mtok));
        row(mt, QStringLiteral("Wall clock"), formatDuration(c.time_s_per_mtok),
            QStringLiteral("With goodput: failures, checkpoints, restarts, stragglers"));
    }

    if (e->outer_sync) {
        const OuterSyncReport& o = *e->outer_sync;
        QTreeWidgetItem* os = group(QStringLiteral("Outer sync"));
        row(os, QStringLiteral("Method"),
            QStringLiteral("%1 over %2 workers")
                .arg(QString::fromLatin1(toString(o.method)))
                .arg(o.workers));
        if (o.method != OuterSyncMethod::Hsdp)
            row(os, QStringLiteral("Inner steps"),
                o.fragments > 1
                    ? QStringLiteral("H %1, %2 fragments").arg(o.inner_steps).arg(o.fragments)
                    : QStringLiteral("H %1").arg(o.inner_steps));
        row(os, QStringLiteral("Inner step"), formatStepTime(o.inner_step_s),
            QStringLiteral("The slowest worker's step"));
        row(os, QStringLiteral("One sync"), formatSeconds(o.sync_s),
            o.method == OuterSyncMethod::Hsdp
                ? QStringLiteral("A step's all-reduces of the gradient shards across the "
                                 "workers, every bucket's, alone")
                : QStringLiteral("One outer all-reduce (one fragment), alone on the links"));
        row(os, QStringLiteral("Sync per step"), formatSeconds(o.exposed_per_step_s),
            QStringLiteral("What the outer syncs add to an average step"));
        row(os, QStringLiteral("Bytes per sync"), formatBytes(o.bytes_per_sync),
            QStringLiteral("Over inter-building links, both directions"));
        if (o.method != OuterSyncMethod::Hsdp) {
            row(os, QStringLiteral("Loss penalty"),
                QStringLiteral("%1 %2").arg(
                    QStringLiteral("%1%").arg(number(100 * o.loss_penalty, 2)),
                    o.penalty_from_curve ? QStringLiteral("(scaling-law curve)")
                                         : QStringLiteral("(the plan's)")),
                QStringLiteral("Relative loss over synchronous DP at equal tokens (Charles et "
                               "al. 2025; docs/RUN.md)"));
            row(os, QStringLiteral("Tokens for the same loss"),
                QStringLiteral("%1×").arg(number(o.token_multiplier, 3)),
                QStringLiteral("Chinchilla's L(N, D) solved for synchronous DP's loss"));
        }
    }

    if (e->run) {
        const RunReport& r = *e->run;
        QTreeWidgetItem* run = group(QStringLiteral("Run"));
        row(run, QStringLiteral("Tokens"), formatTokens(r.tokens));
        row(run, QStringLiteral("Steps"), formatCount(std::int64_t(std::llround(r.steps))));
        row(run, QStringLiteral("Time to the tokens"), formatDuration(r.time_s),
            QStringLiteral("Wall clock with goodput"));
        // At goodput 0 the run never ends: no finite cost, energy or count.
        if (std::isfinite(r.time_s)) {
            if (c.priced)
                row(run, QStringLiteral("Cost"), formatUsd(r.cost_usd));
            row(run, QStringLiteral("Energy"), formatEnergyKwh(r.energy_kwh));
            row(run, QStringLiteral("Expected restarts"), number(r.restarts, 1));
        }
        row(run, QStringLiteral("Target loss"),
            QStringLiteral("%1%2").arg(number(r.target_loss, 3),
                                       plan.target_loss > 0
                                           ? QString()
                                           : QStringLiteral(" (synchronous DP's at the budget)")));
        row(run, QStringLiteral("Tokens to the loss"), formatTokens(r.tokens_to_loss));
        row(run, QStringLiteral("Time to the loss"), formatDuration(r.time_to_loss_s));
    }
    tree_->setUpdatesEnabled(true);
}

} // namespace sa::views

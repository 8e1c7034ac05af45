#include "optimizerpanel.h"

#include "document.h"
#include "optimizerresultsmodel.h"
#include "paretochart.h"
#include "planmetrics.h"
#include "units.h"
#include "wheelguard.h"

#include "export/optimizer_csv.h"
#include "formats/documents.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QMetaObject>
#include <QProgressBar>
#include <QPushButton>
#include <QResizeEvent>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <vector>

namespace sa::views {

namespace {

QString fromStd(const std::string& s) {
    return QString::fromStdString(s);
}

// "12.3 % faster than production (10.05 s)".
QString comparedWith(const OptimizerResult& r, const BaselineResult& b) {
    const QString name = OptimizerResultsModel::baselineTitle(b.name);
    const QString title = b.prior_art ? QStringLiteral("the best prior art") : name.toLower();
    // "(9.32 s)", or "(Megatron multi-DC, 5.84 s)" for the prior art.
    const QString which = b.prior_art ? name + QStringLiteral(", ") : QString();
    if (!b.feasible)
        return QStringLiteral("%1 is infeasible (%2)").arg(title, fromStd(b.problem));
    const auto s = r.speedupOver(b);
    if (!s)
        return QStringLiteral("no comparison with %1").arg(title);
    const QString amount = QString::number(std::fabs(*s) * 100, 'f', 1);
    // Within the 0.1 % shown (the best plan is often the prior art's own).
    if (std::fabs(*s) < 0.0005)
        return QStringLiteral("as fast as %1 (%2%3)")
            .arg(title, which, formatStepTime(b.step_time_s));
    return QStringLiteral("%1 % %2 than %3 (%4%5)")
        .arg(amount, *s >= 0 ? QStringLiteral("faster") : QStringLiteral("slower"), title, which,
             formatStepTime(b.step_time_s));
}

QString strategyTitle(const SearchStrategy& s) {
    if (s.name == "exhaustive")
        return QStringLiteral("Exhaustive search");
    if (s.name == "staged")
        return QStringLiteral("Staged search (%1 seeds, %2 descent rounds)")
            .arg(s.seeds)
            .arg(s.rounds);
    return fromStd(s.name);
}

QString objectiveTitle(Objective o) {
    switch (o) {
    case Objective::StepTime:
        return QStringLiteral("step time");
    case Objective::Cost:
        return QStringLiteral("cost ($, or GPU-seconds without prices)");
    case Objective::CrossBuildingBytes:
        return QStringLiteral("cross-building bytes");
    case Objective::TimeToTokens:
        return QStringLiteral("time to the token budget");
    case Objective::TimeToLoss:
        return QStringLiteral("time to the target loss");
    case Objective::Energy:
        return QStringLiteral("energy");
    }
    return {};
}

// "50, 100" (spaces allowed, empty = none): whole numbers from 1 to
// 1,000,000, as `scaleacross optimize --diloco` takes them; nullopt for
// anything else.
std::optional<std::vector<int>> parseCounts(const QString& text) {
    std::vector<int> out;
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty())
        return out;
    for (const QString& part : trimmed.split(QLatin1Char(','))) {
        bool ok = false;
        const int n = part.trimmed().toInt(&ok);
        if (!ok || n < 1 || n > 1000000)
            return std::nullopt;
        out.push_back(n);
    }
    return out;
}

QString countsText(const std::vector<int>& counts) {
    QStringList parts;
    for (int n : counts)
        parts << QString::number(n);
    return parts.join(QStringLiteral(","));
}

QString candidatesText(std::int64_t done, std::int64_t total) {
    return QStringLiteral("%1 / %2 candidates").arg(formatCount(done), formatCount(total));
}

} // namespace

OptimizerPanel::OptimizerPanel(Document* document, EvaluatorSource evaluator, QWidget* parent)
    : QWidget(parent)
    , document_(document)
    , evaluatorSource_(std::move(evaluator))
    , tracker_(this) {
    setObjectName(QStringLiteral("optimizerPanel"));
    auto* outer = new QVBoxLayout(this);

    // ---- controls -----------------------------------------------------------
    auto* controls = new QHBoxLayout;
    auto labelled = [&](const QString& text, QWidget* w, const QString& tip) {
        auto* l = new QLabel(text, this);
        l->setBuddy(w);
        l->setToolTip(tip);
        w->setToolTip(tip);
        takeWheelOnlyWhenFocused(w);
        controls->addWidget(l);
        controls->addWidget(w);
    };
    objective_ = new QComboBox(this);
    objective_->setObjectName(QStringLiteral("objective"));
    objective_->addItem(QStringLiteral("Step time"), int(Objective::StepTime));
    objective_->addItem(QStringLiteral("Time to tokens"), int(Objective::TimeToTokens));
    objective_->addItem(QStringLiteral("Time to loss"), int(Objective::TimeToLoss));
    objective_->addItem(QStringLiteral("Cost"), int(Objective::Cost));
    objective_->addItem(QStringLiteral("Energy"), int(Objective::Energy));
    objective_->addItem(QStringLiteral("Cross-building bytes"), int(Objective::CrossBuildingBytes));
    labelled(QStringLiteral("&Objective"), objective_,
             QStringLiteral("What the top plans are ranked by: seconds per step; wall clock for "
                            "the plan's token budget or to its target loss, with goodput and "
                            "an outer sync's extra tokens; $ for the run (GPU-seconds where the "
                            "cluster has no prices); kWh for the run; or bytes over "
                            "inter-building links per step (then step time). docs/RUN.md"));
    topK_ = new QSpinBox(this);
    topK_->setObjectName(QStringLiteral("topK"));
    topK_->setRange(1, 500);
    labelled(QStringLiteral("&Top"), topK_, QStringLiteral("Plans to keep"));
    threads_ = new QSpinBox(this);
    threads_->setObjectName(QStringLiteral("threads"));
    threads_->setRange(0, 1024);
    threads_->setSpecialValueText(QStringLiteral("all cores"));
    labelled(QStringLiteral("T&hreads"), threads_, QStringLiteral("Worker threads of the search"));
    budget_ = new QSpinBox(this);
    budget_->setObjectName(QStringLiteral("budget"));
    budget_->setRange(1, 1000000000);
    budget_->setSingleStep(1000);
    budget_->setGroupSeparatorShown(true);
    labelled(QStringLiteral("&Budget"), budget_,
             QStringLiteral("Evaluations of the enumerated part: a space that fits is searched "
                            "exhaustively, a larger one in stages (enumerate the leading axes, "
                            "then coordinate descent)"));
    space_ = new QComboBox(this);
    space_->setObjectName(QStringLiteral("space"));
    space_->addItem(QStringLiteral("default"), int(SpaceSize::Default));
    space_->addItem(QStringLiteral("full"), int(SpaceSize::Full));
    labelled(QStringLiteral("&Space"), space_,
             QStringLiteral("The default space has the usual choices per axis; full adds CP 4/8, "
                            "micro batches 4/8, gpipe, interleaved v4, ZeRO-0 and every uneven "
                            "stage split"));
    runButton_ = new QPushButton(QStringLiteral("&Run"), this);
    runButton_->setObjectName(QStringLiteral("runOptimizer"));
    cancelButton_ = new QPushButton(QStringLiteral("&Cancel"), this);
    cancelButton_->setObjectName(QStringLiteral("cancelOptimizer"));
    loadButton_ = new QPushButton(QStringLiteral("&Load plan"), this);
    loadButton_->setObjectName(QStringLiteral("loadPlan"));
    loadButton_->setToolTip(QStringLiteral("Make the selected plan the document's plan (Undo "
                                           "restores the previous one); double-click a row or "
                                           "a point does the same"));
    exportButton_ = new QPushButton(QStringLiteral("&Export CSV…"), this);
    exportButton_->setObjectName(QStringLiteral("exportCsv"));
    controls->addStretch(1);
    outer->addLayout(controls);

    // ---- the outer-sync axis ----------------------------------------------------
    auto* sync = new QHBoxLayout;
    auto* syncTitle = new QLabel(QStringLiteral("Outer sync across buildings, beside "
                                                "synchronous DP:"),
                                 this);
    sync->addWidget(syncTitle);
    auto syncEdit = [&](const QString& label, const QString& name, const QString& placeholder,
                        const QString& tip) {
        auto* edit = new QLineEdit(this);
        edit->setObjectName(name);
        edit->setPlaceholderText(placeholder);
        edit->setToolTip(tip);
        edit->setMaximumWidth(edit->fontMetrics().horizontalAdvance(QStringLiteral("0")) * 18);
        auto* l = new QLabel(label, this);
        l->setBuddy(edit);
        l->setToolTip(tip);
        sync->addWidget(l);
        sync->addWidget(edit);
        return edit;
    };
    diloco_ = syncEdit(QStringLiteral("&DiLoCo H"), QStringLiteral("dilocoSteps"),
                       QStringLiteral("none, e.g. 50,100"),
                       QStringLiteral("DiLoCo inner steps H to try across buildings, "
                                      "comma-separated (scaleacross optimize --diloco H,...); "
                                      "applied on Return or when leaving the field. "
                                      "docs/RUN.md"));
    fragments_ = syncEdit(QStringLiteral("Streaming &fragments"),
                          QStringLiteral("streamingFragments"), QStringLiteral("none, e.g. 4"),
                          QStringLiteral("Streaming DiLoCo fragment counts to try with each "
                                         "DiLoCo H (--streaming-fragments F,...); a count above "
                                         "H is skipped for that H"));
    hsdp_ = new QCheckBox(QStringLiteral("HS&DP"), this);
    hsdp_->setObjectName(QStringLiteral("hsdp"));
    hsdp_->setToolTip(QStringLiteral("Also try HSDP: shard inside a building, replicate across "
                                     "(--hsdp)"));
    sync->addWidget(hsdp_);
    sync->addStretch(1);
    outer->addLayout(sync);

    // ---- actions, progress and status -----------------------------------------
    progress_ = new QProgressBar(this);
    progress_->setObjectName(QStringLiteral("optimizerProgress"));
    progress_->setRange(0, 1000);
    progress_->setValue(0);
    progress_->setTextVisible(true);
    progress_->setFormat(QStringLiteral("Not run yet"));
    auto* actions = new QHBoxLayout;
    actions->addWidget(runButton_);
    actions->addWidget(cancelButton_);
    actions->addWidget(progress_, 1);
    actions->addWidget(loadButton_);
    actions->addWidget(exportButton_);
    outer->addLayout(actions);
    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("optimizerStatus"));
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    status_->setText(QStringLiteral("Searches parallel degrees, placement, schedule, recompute, "
                                    "ZeRO, layer split, DP collective, CP exchange and link "
                                    "technologies of the open scenario for the best plans."));
    outer->addWidget(status_);
    message_ = new QLabel(this);
    message_->setObjectName(QStringLiteral("optimizerMessage"));
    message_->setWordWrap(true);
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    message_->hide();
    outer->addWidget(message_);

    // ---- table above the chart ------------------------------------------------
    // Stacked: the plan labels need the width, and so does a chart whose
    // x axis spans plans and baselines; side by side where the panel is
    // too short for both (updateSplitterOrientation).
    splitter_ = new QSplitter(Qt::Vertical, this);
    model_ = new OptimizerResultsModel(this);
    proxy_ = new QSortFilterProxyModel(this);
    proxy_->setSourceModel(model_);
    proxy_->setSortRole(OptimizerResultsModel::SortRole);
    table_ = new QTableView(splitter_);
    table_->setObjectName(QStringLiteral("optimizerResults"));
    table_->setModel(proxy_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(OptimizerResultsModel::Rank, Qt::AscendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setWordWrap(false);
    table_->setTextElideMode(Qt::ElideRight);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    QHeaderView* header = table_->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    // The label takes what is left (elided, whole in the tooltip).
    header->setSectionResizeMode(OptimizerResultsModel::Label, QHeaderView::Stretch);
    header->setMinimumSectionSize(40);

    auto* chartBox = new QWidget(splitter_);
    auto* chartLayout = new QVBoxLayout(chartBox);
    chartLayout->setContentsMargins(0, 0, 0, 0);
    chartLayout->setSpacing(2);
    chart_ = new ParetoChart(chartBox);
    toScale_ = new QCheckBox(QStringLiteral("Baselines to scale"), chartBox);
    toScale_->setObjectName(QStringLiteral("baselinesToScale"));
    toScale_->setToolTip(QStringLiteral("Fit the axes to the baselines too; otherwise a baseline "
                                        "far from the searched plans is pinned to the edge of "
                                        "the plot and labelled \"off scale\""));
    auto axisBox = [&](const QString& label, const QString& name, PlanMetric initial,
                       QHBoxLayout* bar) {
        auto* box = new QComboBox(chartBox);
        box->setObjectName(name);
        for (PlanMetric m : kPlanMetrics)
            box->addItem(metricName(m), int(m));
        box->setCurrentIndex(box->findData(int(initial)));
        box->setToolTip(QStringLiteral("The figure on this axis; the front is the plans' Pareto "
                                       "front on the two figures, both minimised. Cost is $ "
                                       "where the cluster has prices, GPU-hours where it has "
                                       "none; without a token budget the run's figures are per "
                                       "step"));
        takeWheelOnlyWhenFocused(box);
        auto* l = new QLabel(label, chartBox);
        l->setBuddy(box);
        bar->addWidget(l);
        bar->addWidget(box);
        return box;
    };
    auto* chartBar = new QHBoxLayout;
    xAxis_ = axisBox(QStringLiteral("&X axis"), QStringLiteral("paretoX"), PlanMetric::StepTime,
                     chartBar);
    yAxis_ = axisBox(QStringLiteral("&Y axis"), QStringLiteral("paretoY"),
                     PlanMetric::CrossBuildingBytes, chartBar);
    chartBar->addSpacing(12);
    // Gives way where the chart sits beside the table.
    hint_ = new QLabel(QStringLiteral("Click a point to select its plan, double-click to "
                                      "load it."),
                       chartBox);
    hint_->setMinimumWidth(0);
    hint_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    chartBar->addWidget(hint_, 1);
    chartBar->addStretch(0); // takes the hint's room while it is hidden
    chartBar->addWidget(toScale_);
    chartLayout->addLayout(chartBar);
    chartLayout->addWidget(chart_, 1);
    splitter_->addWidget(table_);
    splitter_->addWidget(chartBox);
    splitter_->setStretchFactor(0, 1);
    splitter_->setStretchFactor(1, 1);
    splitter_->setChildrenCollapsible(false);
    outer->addWidget(splitter_, 1);
    connect(toScale_, &QCheckBox::toggled, chart_, &ParetoChart::setBaselinesToScale);
    connect(xAxis_, &QComboBox::currentIndexChanged, this, &OptimizerPanel::onAxesChosen);
    connect(yAxis_, &QComboBox::currentIndexChanged, this, &OptimizerPanel::onAxesChosen);
    connect(diloco_, &QLineEdit::editingFinished, this, [this] {
        bool changed = false;
        if (commitList(diloco_, dilocoSteps_, QStringLiteral("DiLoCo H"), &changed) && changed)
            applyOuterSync();
    });
    connect(fragments_, &QLineEdit::editingFinished, this, [this] {
        bool changed = false;
        if (commitList(fragments_, fragmentCounts_, QStringLiteral("Streaming fragments"),
                       &changed) &&
            changed)
            applyOuterSync();
    });
    connect(hsdp_, &QCheckBox::toggled, this, &OptimizerPanel::applyOuterSync);

    ticker_ = new QTimer(this);
    ticker_->setInterval(250);
    connect(ticker_, &QTimer::timeout, this, &OptimizerPanel::updateRunningStatus);

    connect(runButton_, &QPushButton::clicked, this, &OptimizerPanel::run);
    connect(cancelButton_, &QPushButton::clicked, this, &OptimizerPanel::cancel);
    connect(loadButton_, &QPushButton::clicked, this, [this] { loadResult(selectedRow()); });
    connect(exportButton_, &QPushButton::clicked, this, &OptimizerPanel::exportCsvInteractively);
    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        chart_->setSelectedRow(selectedRow());
        updateButtons();
    });
    connect(table_, &QTableView::doubleClicked, this,
            [this](const QModelIndex& index) { loadResult(proxy_->mapToSource(index).row()); });
    connect(chart_, &ParetoChart::planClicked, this, &OptimizerPanel::selectRow);
    connect(chart_, &ParetoChart::planDoubleClicked, this, [this](int row) {
        selectRow(row);
        loadResult(row);
    });
    connect(document_, &Document::scenarioChanged, this, &OptimizerPanel::onDocumentChanged);
    connect(document_, &Document::documentReset, this, &OptimizerPanel::onDocumentChanged);

    setOptions(OptimizerOptions{});
    updateButtons();
}

OptimizerPanel::~OptimizerPanel() {
    // Stop the search and wait for the worker while every member is alive:
    // the optimizer checks the flag before each candidate, so this takes
    // one evaluation, and afterwards nothing posts to this object.
    if (state_)
        state_->stop.store(true);
    tracker_.cancel();
    tracker_.waitForIdle();
    // ~QWidget takes the focus from a child while this object's members are
    // gone already: a line edit losing it would commit to them.
    for (QObject* editor :
         std::initializer_list<QObject*>{diloco_, fragments_, hsdp_, xAxis_, yAxis_})
        editor->disconnect(this);
}

void OptimizerPanel::setOptions(const OptimizerOptions& options) {
    options_ = options;
    options_.cancel = nullptr;
    options_.progress = {};
    objective_->setCurrentIndex(std::max(0, objective_->findData(int(options.objective))));
    topK_->setValue(options.top_k);
    threads_->setValue(options.threads);
    budget_->setValue(int(std::min<std::int64_t>(options.max_evaluations, budget_->maximum())));
    space_->setCurrentIndex(std::max(0, space_->findData(int(options.space.size))));
    // The outer-sync controls show the given axis as lists; it stays as
    // given (custom overlap or bytes included) until a control changes.
    dilocoSteps_.clear();
    fragmentCounts_.clear();
    bool hsdp = false;
    for (const std::optional<OuterSync>& o : options.space.outer_syncs) {
        if (!o)
            continue;
        if (o->method == OuterSyncMethod::Diloco)
            dilocoSteps_.push_back(o->inner_steps);
        else if (o->method == OuterSyncMethod::StreamingDiloco &&
                 std::find(fragmentCounts_.begin(), fragmentCounts_.end(), o->fragments) ==
                     fragmentCounts_.end())
            fragmentCounts_.push_back(o->fragments);
        else if (o->method == OuterSyncMethod::Hsdp)
            hsdp = true;
    }
    diloco_->setText(countsText(dilocoSteps_));
    fragments_->setText(countsText(fragmentCounts_));
    diloco_->setStyleSheet({});
    fragments_->setStyleSheet({});
    const QSignalBlocker block(hsdp_);
    hsdp_->setChecked(hsdp);
}

bool OptimizerPanel::commitList(QLineEdit* edit, std::vector<int>& applied, const QString& what,
                                bool* changed) {
    const auto counts = parseCounts(edit->text());
    if (!counts) {
        edit->setStyleSheet(QStringLiteral("QLineEdit { background: #ffe0e0; }"));
        showMessage(QStringLiteral("%1: \"%2\" is not a list of whole numbers from 1 to "
                                   "1,000,000 separated by commas (e.g. 50,100). The search "
                                   "keeps %3.")
                        .arg(what, edit->text(),
                             applied.empty() ? QStringLiteral("none")
                                             : QStringLiteral("%1").arg(countsText(applied))));
        return false;
    }
    edit->setStyleSheet({});
    if (message_->text().startsWith(what + QStringLiteral(":")))
        message_->hide();
    if (changed)
        *changed = *changed || *counts != applied;
    applied = *counts;
    return true;
}

bool OptimizerPanel::commitOuterSync() {
    bool changed = false;
    const bool h = commitList(diloco_, dilocoSteps_, QStringLiteral("DiLoCo H"), &changed);
    const bool f =
        commitList(fragments_, fragmentCounts_, QStringLiteral("Streaming fragments"), &changed);
    if (changed)
        applyOuterSync();
    return h && f;
}

void OptimizerPanel::applyOuterSync() {
    options_.space.outer_syncs =
        outerSyncChoices(dilocoSteps_, fragmentCounts_, hsdp_->isChecked());
}

void OptimizerPanel::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    updateSplitterOrientation();
}

void OptimizerPanel::updateSplitterOrientation() {
    const QSize size = splitter_->size();
    if (size.isEmpty())
        return;
    // Hysteresis: a size near the threshold does not flip it back and forth.
    const double ratio = double(size.width()) / double(size.height());
    Qt::Orientation want = splitter_->orientation();
    if (want == Qt::Vertical && ratio > 3.0)
        want = Qt::Horizontal;
    else if (want == Qt::Horizontal && ratio < 2.2)
        want = Qt::Vertical;
    if (want == splitter_->orientation())
        return;
    splitter_->setOrientation(want);
    hint_->setVisible(want == Qt::Vertical);
    // The table takes a little more: its columns need the width, its rows
    // the height.
    const int length = want == Qt::Horizontal ? size.width() : size.height();
    splitter_->setSizes({length * 11 / 20, length * 9 / 20});
}

void OptimizerPanel::onAxesChosen() {
    chart_->setAxes(PlanMetric(xAxis_->currentData().toInt()),
                    PlanMetric(yAxis_->currentData().toInt()));
}

OptimizerOptions OptimizerPanel::options() const {
    OptimizerOptions o = options_;
    o.objective = Objective(objective_->currentData().toInt());
    o.top_k = topK_->value();
    o.threads = threads_->value();
    o.max_evaluations = budget_->value();
    o.space.size = SpaceSize(space_->currentData().toInt());
    return o;
}

OptimizerPanel::BaselineKey OptimizerPanel::baselineKey(const Scenario& current,
                                                        const Plan& asOpened,
                                                        const OptimizerOptions& options) {
    const BaselineOptions b = baselineOptions(options);
    return {current.cluster, current.model,     baselineBasePlan(asOpened, current.plan),
            b.gpu_budget,    b.max_evaluations, b.size};
}

void OptimizerPanel::run() {
    if (document_->isEmpty()) {
        showMessage(QStringLiteral("Open a scenario to search its plans."));
        return;
    }
    // An outer-sync list that does not read stays unapplied: no search
    // with other lists than those on screen.
    if (!commitOuterSync())
        return;
    // The previous search stops at its next candidate; the tracker drops
    // its result because a newer generation starts below.
    if (state_)
        state_->stop.store(true);
    auto state = std::make_shared<RunState>();
    state_ = state;
    searching_ = document_->scenario();

    OptimizerOptions o = options();
    o.cancel = &state->stop;
    // Worker threads (serialised by the optimizer): keep the latest numbers
    // and queue one call to the UI thread unless one is already queued. The
    // panel outlives every worker (its destructor waits), so `panel` is
    // valid wherever this runs.
    o.progress = [state, panel = this](std::int64_t done, std::int64_t total) {
        state->done.store(done);
        state->total.store(total);
        if (!state->progressQueued.exchange(true))
            postTo(panel, [panel, state] {
                state->progressQueued.store(false);
                panel->onProgress(state);
            });
    };

    runningLabel_ = QStringLiteral("Searching plans for %1 on %2 by %3")
                        .arg(fromStd(searching_.model.name), fromStd(searching_.cluster.name),
                             objectiveTitle(o.objective));
    std::shared_ptr<const Evaluator> evaluator = evaluatorSource_ ? evaluatorSource_() : nullptr;
    if (evaluator && !(evaluator->cluster() == searching_.cluster))
        evaluator.reset();
    searchingKey_ = baselineKey(searching_, document_->baseline().plan, o);
    if (o.baselines && cachedKey_ && *cachedKey_ == searchingKey_)
        o.given_baselines = cachedBaselines_;
    auto job = [state, evaluator, scenario = searching_, baselineBase = searchingKey_.base,
                o = std::move(o)](const std::atomic<bool>&) mutable {
        Outcome out;
        try {
            if (!evaluator)
                evaluator = std::make_shared<const Evaluator>(scenario.cluster);
            if (o.baselines && !o.given_baselines) {
                auto b = std::make_shared<const std::vector<BaselineResult>>(
                    computeBaselines(*evaluator, scenario.model, baselineBase, baselineOptions(o)));
                o.given_baselines = b;
                if (!state->stop.load()) // complete: the panel may keep them
                    out.baselines = std::move(b);
            }
            out.result = optimize(*evaluator, scenario.model, scenario.plan, o);
        } catch (const std::exception& e) {
            out.error = QStringLiteral("The search failed: %1").arg(QString::fromUtf8(e.what()));
        }
        return out;
    };
    tracker_.startJob(std::move(job), [this, state](std::shared_ptr<const Outcome> outcome) {
        onFinished(state, std::move(outcome));
    });

    clock_.start();
    message_->hide();
    progress_->setRange(0, 0); // busy until the first progress report
    progress_->setFormat(QStringLiteral("Starting…"));
    setRunning(true);
    updateRunningStatus();
}

void OptimizerPanel::cancel() {
    if (!running_ || !state_)
        return;
    state_->stop.store(true);
    cancelButton_->setEnabled(false);
    status_->setText(QStringLiteral("Cancelling…"));
}

void OptimizerPanel::setRunning(bool running) {
    if (running_ == running)
        return;
    running_ = running;
    if (running)
        ticker_->start();
    else
        ticker_->stop();
    updateButtons();
    Q_EMIT runningChanged(running);
}

void OptimizerPanel::onProgress(const std::shared_ptr<RunState>& state) {
    if (state != state_ || !running_)
        return;
    const std::int64_t done = state->done.load();
    const std::int64_t total = state->total.load();
    if (total > 0) {
        progress_->setRange(0, 1000);
        progress_->setValue(int(std::min<std::int64_t>(1000, done * 1000 / total)));
        progress_->setFormat(candidatesText(done, total));
    }
    updateRunningStatus();
}

void OptimizerPanel::updateRunningStatus() {
    if (!running_ || !state_)
        return;
    if (state_->stop.load()) {
        status_->setText(QStringLiteral("Cancelling…"));
        return;
    }
    const double s = double(clock_.elapsed()) / 1e3;
    const std::int64_t done = state_->done.load();
    QString text = QStringLiteral("%1 · %2").arg(runningLabel_, formatSeconds(s));
    if (done > 0 && s > 0)
        text += QStringLiteral(" · %1 candidates/s").arg(formatCount(std::llround(done / s)));
    status_->setText(text);
}

void OptimizerPanel::onFinished(const std::shared_ptr<RunState>& state,
                                std::shared_ptr<const Outcome> outcome) {
    if (state != state_)
        return;
    setRunning(false);
    if (!outcome->error.isEmpty()) {
        progress_->setRange(0, 1000);
        progress_->setValue(0);
        progress_->setFormat(QStringLiteral("Failed"));
        status_->setText(outcome->error);
        updateButtons();
        Q_EMIT finished();
        return;
    }
    if (outcome->baselines) {
        cachedKey_ = searchingKey_;
        cachedBaselines_ = outcome->baselines;
    }
    result_ = std::shared_ptr<const OptimizerResult>(outcome, &outcome->result);
    searched_ = searching_;
    const bool priced = clusterPriced(searched_.cluster);
    model_->setResult(result_, priced);
    chart_->setResult(result_, priced);
    const std::int64_t done = state->done.load();
    const std::int64_t total = state->total.load();
    progress_->setRange(0, 1000);
    if (result_->cancelled) {
        progress_->setValue(total > 0 ? int(std::min<std::int64_t>(1000, done * 1000 / total)) : 0);
        progress_->setFormat(QStringLiteral("Cancelled at %1").arg(candidatesText(done, total)));
    } else {
        progress_->setValue(1000);
        progress_->setFormat(candidatesText(total, total));
    }
    updateResultStatus();
    if (model_->rowCount() > 0)
        selectRow(0);
    onDocumentChanged(); // the document may have changed while it searched
    Q_EMIT finished();
}

void OptimizerPanel::updateResultStatus() {
    if (!result_)
        return;
    const OptimizerResult& r = *result_;
    QStringList lines;
    if (r.cancelled)
        lines << QStringLiteral("Cancelled after %1: partial results, %2 plans from %3 "
                                "evaluations; baselines not computed.")
                     .arg(formatSeconds(r.elapsed_s))
                     .arg(r.top.size())
                     .arg(formatCount(r.evaluated));
    lines << QStringLiteral("%1 by %2 · %3 evaluated · %4 feasible · %5 pruned · %6 "
                            "evaluations/s · %7 on %8 threads")
                 .arg(strategyTitle(r.strategy), objectiveTitle(r.objective),
                      formatCount(r.evaluated), formatCount(r.feasible),
                      formatCount(r.prunedTotal()), formatCount(std::llround(r.evaluations_per_s)),
                      formatSeconds(r.elapsed_s))
                 .arg(r.threads);
    if (r.top.empty()) {
        lines << QStringLiteral("No feasible plan found.");
    } else {
        QString best =
            QStringLiteral("Best plan: %1 per step").arg(formatStepTime(r.top.front().step_time_s));
        QStringList comparisons;
        // The plan as given, production and the best prior art: the rest
        // are in the table and the tooltip.
        const BaselineResult* prior = bestPriorArt(r.baselines);
        for (const BaselineResult& b : r.baselines)
            if (b.name == "as-given" || b.name == "production" || &b == prior)
                comparisons << comparedWith(r, b);
        if (!comparisons.isEmpty())
            best += QStringLiteral(", ") + comparisons.join(QStringLiteral(", "));
        lines << best + QStringLiteral(".");
    }
    status_->setText(lines.join(QLatin1Char('\n')));

    QStringList tip;
    tip << fromStd(r.strategy.description);
    if (!r.strategy.descent_axes.empty()) {
        QStringList e, d;
        for (const auto& a : r.strategy.enumerated_axes)
            e << fromStd(a);
        for (const auto& a : r.strategy.descent_axes)
            d << fromStd(a);
        tip << QStringLiteral("Enumerated: structure, %1").arg(e.join(QStringLiteral(", ")));
        tip << QStringLiteral("By descent only: %1").arg(d.join(QStringLiteral(", ")));
    }
    tip << QStringLiteral("Covered %1% of the space (%2 of %3 candidates looked at)")
               .arg(QString::number(100 * r.coverage, 'g', 3), formatCount(r.enumerated),
                    QString::number(r.space_size, 'g', 4));
    if (r.lower_bound.step_s() > 0)
        tip << QStringLiteral("No plan on these GPUs can be faster than %1 (compute at the best "
                              "GEMM efficiency; unavoidable cross-building traffic)")
                   .arg(formatStepTime(r.lower_bound.step_s()));
    if (!r.baselines.empty())
        tip << QStringLiteral("Baselines: found once per scenario, from the plan as opened with "
                              "the current batch and token budget, on the current cluster and "
                              "model; editing the plan does not move them.");
    for (const BaselineResult& b : r.baselines)
        tip << QStringLiteral("%1: %2 (%3)")
                   .arg(fromStd(b.title), fromStd(b.recipe), fromStd(b.source));
    if (!r.pruned.empty()) {
        tip << QStringLiteral("Pruned:");
        for (const auto& [why, n] : r.pruned)
            tip << QStringLiteral("  %1  %2").arg(formatCount(n), fromStd(why));
    }
    status_->setToolTip(tip.join(QLatin1Char('\n')));
}

QString OptimizerPanel::statusText() const {
    QString text = status_->text();
    if (!message_->isHidden() && !message_->text().isEmpty())
        text += QLatin1Char('\n') + message_->text();
    return text;
}

bool OptimizerPanel::resultMatchesDocument() const {
    if (!result_ || document_->isEmpty())
        return false;
    const Scenario& s = document_->scenario();
    return s.cluster == searched_.cluster && s.model == searched_.model;
}

void OptimizerPanel::onDocumentChanged() {
    if (result_ && !resultMatchesDocument())
        showMessage(QStringLiteral("The cluster or model changed since this search: its plans "
                                   "cannot be loaded. Run the search again."));
    else if (message_->text().startsWith(QStringLiteral("The cluster or model changed")))
        message_->hide();
    updateButtons();
}

void OptimizerPanel::showMessage(const QString& text) {
    message_->setText(text);
    message_->setVisible(!text.isEmpty());
}

void OptimizerPanel::selectRow(int row) {
    QItemSelectionModel* selection = table_->selectionModel();
    if (row < 0 || row >= model_->rowCount()) {
        selection->clearSelection();
        return;
    }
    const QModelIndex index = proxy_->mapFromSource(model_->index(row, 0));
    selection->setCurrentIndex(index,
                               QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    table_->scrollTo(index);
}

int OptimizerPanel::selectedRow() const {
    const QModelIndexList rows = table_->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return -1;
    return proxy_->mapToSource(rows.front()).row();
}

bool OptimizerPanel::loadResult(int row) {
    const Plan* plan = model_->planAt(row);
    if (!plan) {
        showMessage(model_->isBaselineRow(row)
                        ? QStringLiteral("This baseline is infeasible: there is no plan to load.")
                        : QStringLiteral("Select a plan to load."));
        return false;
    }
    if (!resultMatchesDocument()) {
        showMessage(QStringLiteral("The cluster or model changed since this search: its plans "
                                   "cannot be loaded. Run the search again."));
        return false;
    }
    Scenario next = document_->scenario();
    next.plan = *plan;
    const std::vector<Diagnostic> problems = validateScenario(next);
    if (!problems.empty()) {
        showMessage(
            QStringLiteral("Cannot load this plan: %1").arg(fromStd(problems.front().str())));
        return false;
    }
    QString what;
    switch (*model_->kindAt(row)) {
    case OptimizerResultsModel::RowKind::Top:
        what = QStringLiteral("plan #%1").arg(row + 1);
        break;
    case OptimizerResultsModel::RowKind::Pareto:
        what = QStringLiteral("the Pareto-front plan with %1 across buildings")
                   .arg(formatBytes(model_->scoredPlanAt(row)->cross_building_bytes));
        break;
    case OptimizerResultsModel::RowKind::Baseline:
        what =
            QStringLiteral("the %1 baseline")
                .arg(OptimizerResultsModel::baselineTitle(model_->baselineAt(row)->name).toLower());
        break;
    }
    if (document_->scenario().plan == *plan) {
        showMessage(QStringLiteral("The document already has %1.").arg(what));
        return true;
    }
    document_->setPlan(*plan, QStringLiteral("Load optimizer %1").arg(what));
    showMessage(QStringLiteral("Loaded %1 (%2 per step). Undo restores the previous plan.")
                    .arg(what, formatStepTime(model_->stepTimeAt(row))));
    return true;
}

bool OptimizerPanel::exportCsv(const QString& path, QString* error) const {
    if (!result_) {
        if (error)
            *error = QStringLiteral("There is no result to export: run the search first.");
        return false;
    }
    // The rows of the table: the front's plans beyond the top included.
    OptimizerCsvOptions options;
    options.pareto_rows = true;
    const std::string problem =
        saveFileAtomically(path.toStdString(), optimizerCsv(*result_, options));
    if (!problem.empty()) {
        if (error)
            *error = fromStd(problem);
        return false;
    }
    return true;
}

void OptimizerPanel::exportCsvInteractively() {
    if (!result_)
        return;
    const QString suggested =
        QDir::home().filePath(QStringLiteral("%1-%2-optimizer.csv")
                                  .arg(fromStd(result_->model), fromStd(result_->cluster)));
    const QString path =
        QFileDialog::getSaveFileName(this, QStringLiteral("Export optimizer results"), suggested,
                                     QStringLiteral("CSV files (*.csv);;All files (*)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!exportCsv(path, &error)) {
        QMessageBox::warning(this, QStringLiteral("Export optimizer results"), error);
        return;
    }
    showMessage(QStringLiteral("Wrote %1 rows to %2.")
                    .arg(model_->rowCount())
                    .arg(QDir::toNativeSeparators(path)));
}

void OptimizerPanel::updateButtons() {
    const bool haveDocument = !document_->isEmpty();
    runButton_->setEnabled(haveDocument);
    runButton_->setText(running_ ? QStringLiteral("&Restart") : QStringLiteral("&Run"));
    cancelButton_->setEnabled(running_ && state_ && !state_->stop.load());
    const int row = selectedRow();
    loadButton_->setEnabled(row >= 0 && model_->planAt(row) && resultMatchesDocument());
    exportButton_->setEnabled(result_ != nullptr);
}

} // namespace sa::views

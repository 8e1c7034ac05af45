#include "planinspector.h"

#include "cost/balance.h"
#include "cost/outer.h"
#include "cost/placement.h"
#include "document.h"
#include "formats/documents.h"
#include "formats/json_check.h"
#include "model/framework_defaults.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QFrame>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QRegularExpression>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace sa::views {

namespace {

// The largest value a field takes: the files' own bound for the key
// (formats/json_check.h), so the inspector can show whatever a file holds.
double top(const formats::NumberRange& r) {
    return r.max.value_or(1e9);
}

// The dynamic property that marks a field the user has typed into since
// its value was last committed or shown (PlanInspector::guardEditor).
constexpr const char* kTypedProperty = "saTyped";

const std::vector<ScheduleKind> kSchedules = {ScheduleKind::GPipe, ScheduleKind::OneFOneB,
                                              ScheduleKind::Interleaved, ScheduleKind::ZeroBubble};
const std::vector<Recompute> kRecompute = {Recompute::None, Recompute::Selective, Recompute::Full,
                                           Recompute::SelectiveOp};
const std::vector<CollectiveAlgo> kAlgos = {CollectiveAlgo::Auto, CollectiveAlgo::Ring,
                                            CollectiveAlgo::Tree, CollectiveAlgo::Hierarchical};

// The 24 rank orders of tp, cp, pp, dp, innermost first.
std::vector<std::vector<Dim>> rankOrders() {
    std::vector<Dim> dims = {Dim::TP, Dim::CP, Dim::PP, Dim::DP};
    std::vector<std::vector<Dim>> all;
    std::sort(dims.begin(), dims.end());
    do {
        all.push_back(dims);
    } while (std::next_permutation(dims.begin(), dims.end()));
    return all;
}

QString rankOrderText(const std::vector<Dim>& order) {
    QStringList parts;
    for (Dim d : order)
        parts << QString::fromLatin1(toString(d));
    return parts.join(QStringLiteral(" › "));
}

// A titled group of the inspector's column and its form.
QFormLayout* formGroup(QWidget* content, QVBoxLayout* column, const QString& title) {
    auto* box = new QGroupBox(title, content);
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setLabelAlignment(Qt::AlignRight);
    column->addWidget(box);
    return form;
}

// "DP", "PP and DP", "nothing (one building)", or the placement's problem.
QString acrossText(const PlacementResult& placed) {
    if (!placed.ok())
        return QStringLiteral("(does not fit the cluster)");
    const std::vector<Dim> dims = dimsAcrossBuildings(placed.grid);
    if (dims.empty())
        return QStringLiteral("nothing (one building)");
    QStringList parts;
    for (Dim d : dims)
        parts << QString::fromLatin1(toString(d)).toUpper();
    return parts.join(QStringLiteral(" and "));
}

// Why the plan check refuses a rank order for the plan's degrees on this
// cluster (core/formats/validate.cpp; empty when it does not): pp or dp
// inside tp or cp, or cp inside tp spreading TP groups over hosts.
QString refusedOrderText(const Cluster& cluster, const Plan& plan) {
    if (const auto split = plan.modelParallelSplit())
        return QStringLiteral("%1 inside %2 splits the model-parallel groups")
            .arg(QString::fromLatin1(toString(split->second)),
                 QString::fromLatin1(toString(split->first)));
    const std::int64_t span = plan.rankStride(Dim::TP) * plan.parallelism.tp;
    if (span > plan.parallelism.tp)
        for (const Building& b : cluster.buildings)
            if (b.gpus_per_host > 0 && b.gpus_per_host % span != 0)
                return QStringLiteral("TP groups would leave a host");
    return {};
}

QStringList names(std::initializer_list<const char*> list) {
    QStringList out;
    for (const char* s : list)
        out << QString::fromLatin1(s);
    return out;
}

// A grid change invalidates explicit placement runs outside the new grid and
// a per-stage layer split of the old length: drop those rather than refuse
// every pp or dp edit on a plan that has them.
void fitPlacementToGrid(Plan& plan) {
    if (!plan.placement)
        return;
    auto& runs = plan.placement->runs;
    runs.erase(std::remove_if(runs.begin(), runs.end(),
                              [&](const PlacementRun& r) {
                                  return r.stage_last >= plan.parallelism.pp ||
                                         r.replica_last >= plan.parallelism.dp;
                              }),
               runs.end());
    if (!plan.placement->layers_per_stage.empty() &&
        int(plan.placement->layers_per_stage.size()) != plan.parallelism.pp)
        plan.placement->layers_per_stage.clear();
}

} // namespace

QStringList PlanInspector::technologyNames(const Cluster& cluster) {
    QStringList out = names({"roce", "roce-long-haul", "tcp", "tcp-multiflow"});
    for (const auto& [name, tech] : cluster.technologies)
        if (!out.contains(QString::fromStdString(name)))
            out << QString::fromStdString(name);
    return out;
}

PlanInspector::PlanInspector(Document* document, QWidget* parent)
    : QWidget(parent)
    , document_(document) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->setSpacing(0);

    scroll_ = new QScrollArea(this);
    scroll_->setWidgetResizable(true);
    scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll_->setFrameShape(QFrame::NoFrame);
    auto* scroll = scroll_;
    auto* content = new QWidget(scroll);
    auto* column = new QVBoxLayout(content);
    scroll->setWidget(content);
    outer->addWidget(scroll, 1);

    // Below the fields, not above them: a refused value must not push the
    // field the user is typing into out from under the cursor.
    messageBox_ = new QFrame(this);
    messageBox_->setObjectName(QStringLiteral("inspectorMessage"));
    messageBox_->setAutoFillBackground(true);
    QPalette pal = messageBox_->palette();
    pal.setColor(QPalette::Window, QColor(0xff, 0xe3, 0xe3));
    pal.setColor(QPalette::WindowText, QColor(0x84, 0x1d, 0x1d));
    messageBox_->setPalette(pal);
    auto* messageLayout = new QHBoxLayout(messageBox_);
    messageLayout->setContentsMargins(8, 6, 4, 6);
    message_ = new QLabel(messageBox_);
    message_->setObjectName(QStringLiteral("inspectorMessageText"));
    message_->setWordWrap(true);
    message_->setTextFormat(Qt::PlainText);
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* close = new QToolButton(messageBox_);
    close->setObjectName(QStringLiteral("inspectorMessageClose"));
    close->setText(QStringLiteral("✕"));
    close->setAutoRaise(true);
    close->setToolTip(QStringLiteral("Dismiss and put the plan's value back in the field"));
    // Dismissing also puts the refused value out of the field: what the
    // fields show is what is applied.
    connect(close, &QToolButton::clicked, this, &PlanInspector::refresh);
    messageLayout->addWidget(message_, 1);
    messageLayout->addWidget(close, 0, Qt::AlignTop);
    messageBox_->hide();
    outer->addWidget(messageBox_);

    auto group = [&](const QString& title) { return formGroup(content, column, title); };

    QFormLayout* par = group(QStringLiteral("Parallelism"));
    addSpin(par, QStringLiteral("tp"), QStringLiteral("Tensor (TP)"), 1, 1024,
            QStringLiteral("GPUs per tensor-parallel group; stays inside a host's NVLink domain"),
            [](Scenario& s, int v) { s.plan.parallelism.tp = v; });
    addSpin(par, QStringLiteral("cp"), QStringLiteral("Context (CP)"), 1, 1024,
            QStringLiteral("Context-parallel degree: splits the sequence"),
            [](Scenario& s, int v) { s.plan.parallelism.cp = v; });
    addSpin(par, QStringLiteral("pp"), QStringLiteral("Pipeline (PP)"), 1, 1024,
            QStringLiteral("Pipeline stages; explicit runs or layer splits that no longer fit "
                           "are dropped"),
            [](Scenario& s, int v) {
                s.plan.parallelism.pp = v;
                fitPlacementToGrid(s.plan);
            });
    addSpin(par, QStringLiteral("dp"), QStringLiteral("Data (DP)"), 1, 1 << 20,
            QStringLiteral("Data-parallel replicas; explicit runs that no longer fit are dropped"),
            [](Scenario& s, int v) {
                s.plan.parallelism.dp = v;
                fitPlacementToGrid(s.plan);
            });
    addSpin(par, QStringLiteral("ep"), QStringLiteral("Expert (EP)"), 1, 1024,
            QStringLiteral("Expert-parallel degree: each TP x CP cell's CP ranks (and TP ranks "
                           "beyond Expert TP) first, then DP replicas"),
            [](Scenario& s, int v) { s.plan.parallelism.ep = v; });
    addDefaultedSpin(
        par, QStringLiteral("etp"), QStringLiteral("Expert TP"), 0, 1024,
        QStringLiteral("GPUs each expert is split over (Megatron --expert-tensor-parallel-size, "
                       "torchtitan expert_tensor_parallel_degree), a divisor of TP. Below TP "
                       "the experts fold the rest of each TP x CP cell into EP, which then "
                       "spans replicas"),
        [](Scenario& s, int v) { s.plan.parallelism.etp = v == s.plan.parallelism.tp ? 0 : v; },
        QStringLiteral("= TP"), [](const Scenario& s) { return s.model.moe.has_value(); });
    const auto orders = rankOrders();
    QStringList orderNames;
    for (const auto& o : orders)
        orderNames << rankOrderText(o);
    auto* rank =
        addCombo(par, QStringLiteral("rank_order"), QStringLiteral("Rank order"), orderNames,
                 QStringLiteral("Innermost first: the outermost dimension crosses "
                                "buildings; tp and cp stay innermost"),
                 [orders](Scenario& s, int i) { s.plan.rank_order = orders[std::size_t(i)]; });
    // What each order puts across buildings (with the plan's explicit
    // placement, as picking it would), on its item and below the list.
    auto* across = new QLabel(par->parentWidget());
    across->setObjectName(QStringLiteral("acrossBuildings"));
    across->setWordWrap(true);
    // At the top of its row: the form sizes a wrapping label for a narrower
    // width than it gets, and a centred line floated in the spare height.
    across->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    par->addRow(QString(), across);
    refreshers_.push_back([this, rank, orders, across] {
        const Scenario& sc = document_->scenario();
        const auto& o = sc.plan.rank_order;
        const auto it = std::find(orders.begin(), orders.end(), o);
        rank->setCurrentIndex(it == orders.end() ? -1 : int(it - orders.begin()));
        // The 24 orders' words depend on the cluster, the grid and the
        // plan's explicit placement (its runs apply over any order, so an
        // order picked now keeps them): placed again when one changes, not
        // on every other edit.
        const Parallelism& grid = sc.plan.parallelism;
        const std::array<int, 4> key = {grid.tp, grid.cp, grid.pp, grid.dp};
        if (!orderKeyValid_ || key != orderKey_ || sc.plan.placement != orderPlacement_) {
            orderKey_ = key;
            orderPlacement_ = sc.plan.placement;
            orderKeyValid_ = true;
            Plan p = sc.plan;
            auto* items = qobject_cast<QStandardItemModel*>(rank->model());
            // Each item says what its order puts across buildings, or, for
            // an order the plan check refuses (greyed), why. Where every
            // order the check accepts puts the same thing across (one
            // building in the cluster, or a placement that fills one) the
            // words tell the orders apart no more: the line below says it
            // once and the items stay short enough to read in the box.
            std::vector<QString> why(orders.size());
            std::vector<bool> accepted(orders.size());
            const QString* firstAccepted = nullptr;
            bool allAlike = true;
            for (std::size_t i = 0; i < orders.size(); ++i) {
                p.rank_order = orders[i];
                why[i] = refusedOrderText(sc.cluster, p);
                accepted[i] = why[i].isEmpty();
                if (!accepted[i])
                    continue;
                why[i] = acrossText(placeCells(sc.cluster, p));
                if (!firstAccepted)
                    firstAccepted = &why[i];
                else
                    allAlike = allAlike && why[i] == *firstAccepted;
            }
            for (std::size_t i = 0; i < orders.size(); ++i) {
                const bool bare = accepted[i] && allAlike;
                rank->setItemText(int(i), rankOrderText(orders[i]) +
                                              (bare ? QString() : QStringLiteral(" — ") + why[i]));
                if (items)
                    items->item(int(i))->setEnabled(accepted[i]);
            }
        }
        across->setText(QStringLiteral("Across buildings: ") +
                        acrossText(placeCells(sc.cluster, sc.plan)));
    });

    QFormLayout* batch = group(QStringLiteral("Batch"));
    addSpin(batch, QStringLiteral("sequence_length"), QStringLiteral("Sequence length"), 1, 1 << 24,
            QStringLiteral("Tokens per sequence"),
            [](Scenario& s, int v) { s.plan.sequence_length = v; });
    addSpin(batch, QStringLiteral("global_batch_sequences"), QStringLiteral("Global batch"), 1,
            1 << 24, QStringLiteral("Sequences per optimizer step"),
            [](Scenario& s, int v) { s.plan.global_batch_sequences = v; });
    addSpin(batch, QStringLiteral("micro_batch_sequences"), QStringLiteral("Micro batch"), 1,
            1 << 16, QStringLiteral("Sequences per microbatch"),
            [](Scenario& s, int v) { s.plan.micro_batch_sequences = v; });

    QFormLayout* sched = group(QStringLiteral("Schedule and memory"));
    // A framework sets its software defaults (kernels, fusion, FP8, ZeRO,
    // gradient bytes, overlap, bucket, sequence parallelism) as one undo
    // step; the plan's structure (degrees, rank order, schedule, recompute)
    // stays the user's. Each knob stays editable below.
    addCombo(sched, QStringLiteral("framework"), QStringLiteral("Framework"),
             names({"none", "Megatron-Core", "NeMo", "torchtitan"}),
             QStringLiteral("none: the document format's defaults. A framework sets its defaults "
                            "for the kernels, fusion, FP8, ZeRO "
                            "stage, gradient bytes, DP overlap and bucket and sequence "
                            "parallelism (docs/FRAMEWORKS.md \"Framework defaults\"); the degrees, "
                            "rank order, schedule and recompute stay as they are"),
             [](Scenario& s, int i) {
                 if (i == 0)
                     s.plan.framework.reset();
                 else
                     applyFrameworkSoftwareDefaults(s.plan, TrainingFramework(i - 1));
             });
    QStringList scheduleNames;
    for (auto k : kSchedules)
        scheduleNames << QString::fromLatin1(toString(k));
    addCombo(
        sched, QStringLiteral("schedule"), QStringLiteral("Pipeline schedule"), scheduleNames,
        QStringLiteral("Only interleaved has virtual stages: choosing it sets the fewest (2 or "
                       "more) that split the layers evenly, choosing another sets them to 1"),
        [](Scenario& s, int i) {
            // One edit, one undo step: the schedule with the virtual
            // stages it allows (from interleaved at 5, 1F1B needs 1, and
            // interleaved at 1 is refused), else no schedule could
            // follow another.
            Schedule& sc = s.plan.schedule;
            sc.kind = kSchedules[std::size_t(i)];
            if (sc.kind != ScheduleKind::Interleaved) {
                sc.virtual_stages = 1;
            } else if (sc.virtual_stages < 2) {
                const int chunks = std::max(1, s.plan.parallelism.pp);
                int v = 2;
                while (v < 64 && s.model.layers % (chunks * v) != 0)
                    ++v;
                // None: 2, which the plan check refuses unless the
                // placement gives the layers per stage, and says so.
                sc.virtual_stages = s.model.layers % (chunks * v) == 0 ? v : 2;
            }
        });
    addSpin(sched, QStringLiteral("virtual_stages"), QStringLiteral("Virtual stages"), 1, 64,
            QStringLiteral("Model chunks per pipeline stage (interleaved 1F1B)"),
            [](Scenario& s, int v) { s.plan.schedule.virtual_stages = v; });
    addCombo(sched, QStringLiteral("zero_stage"), QStringLiteral("ZeRO stage"),
             names({"0 (replicated)", "1 (optimizer)", "2 (+ gradients)", "3 (+ weights)"}),
             QStringLiteral("What data-parallel ranks shard"),
             [](Scenario& s, int i) { s.plan.zero_stage = i; });
    auto* dpShard = addSpin(
        sched, QStringLiteral("dp_shard"), QStringLiteral("ZeRO shard group"), 1, 1 << 20,
        QStringLiteral("Data-parallel ranks ZeRO shards over (x cp). Below dp it is HSDP: "
                       "dp / group copies of the sharded state, which all-reduce their gradient "
                       "shards once a step (torchtitan data_parallel_shard_degree, FSDP "
                       "HYBRID_SHARD over a node, Megatron --num-distributed-optimizer-instances "
                       "dp / group). Equal to dp: one group. With HSDP across buildings (Outer "
                       "sync and run) it shows the group the buildings make, and is set there"),
        [](Scenario& s, int v) { s.plan.dp_shard = v == s.plan.parallelism.dp ? 0 : v; });
    enableWhen(dpShard, [](const Scenario& s) {
        return s.plan.zero_stage > 0 && s.plan.parallelism.dp > 1 && s.plan.parallelism.ep == 1 &&
               !s.plan.outer_sync;
    });
    QStringList recomputeNames;
    for (auto r : kRecompute)
        recomputeNames << QString::fromLatin1(toString(r));
    addCombo(sched, QStringLiteral("recompute"), QStringLiteral("Recompute"), recomputeNames,
             QStringLiteral("Activation recomputation"),
             [](Scenario& s, int i) { s.plan.recompute = kRecompute[std::size_t(i)]; });
    addCombo(sched, QStringLiteral("recompute_method"), QStringLiteral("Recompute method"),
             names({"uniform", "block"}),
             QStringLiteral("With full recompute (Megatron --recompute-method): uniform "
                            "recomputes every layer, keeping one input per group of N layers; "
                            "block recomputes only the first N layers of each model chunk"),
             [](Scenario& s, int i) { s.plan.recompute_method = RecomputeMethod(i); });
    addSpin(sched, QStringLiteral("recompute_layers"), QStringLiteral("Recompute layers"), 1, 4096,
            QStringLiteral("N of the recompute method (Megatron --recompute-num-layers)"),
            [](Scenario& s, int v) { s.plan.recompute_layers = v; });
    addRecomputeModules(sched);
    // The fused kernels in AttentionKernel's order, then the unfused 2021 kernels.
    addCombo(sched, QStringLiteral("attention_kernel"), QStringLiteral("Attention kernel"),
             names({"auto (cuDNN on Hopper)", "FlashAttention-2", "FlashAttention-3", "cuDNN",
                    "unfused (2021 Megatron)"}),
             QStringLiteral("The attention core's kernel: on Hopper FlashAttention-2 (PyTorch "
                            "SDPA, torchtitan) runs at ~60% of cuDNN's rate (Transformer "
                            "Engine's pick); elsewhere all fused kernels run alike"),
             [](Scenario& s, int i) {
                 s.plan.flash_attention = i < 4;
                 if (i < 4)
                     s.plan.attention_kernel = AttentionKernel(i);
             });
    addCombo(sched, QStringLiteral("elementwise"), QStringLiteral("Elementwise ops"),
             names({"fused", "eager (PyTorch)", "compiled (torch.compile)"}),
             QStringLiteral("How norms, RoPE, activation and residual adds run: fused kernels "
                            "(Megatron, Transformer Engine), PyTorch eager mode, where each op "
                            "reads and writes HBM (torchtitan without compile), or "
                            "torch.compile, fused but for torchtitan's complex-form RoPE, "
                            "which Inductor leaves eager"),
             [](Scenario& s, int i) { s.plan.elementwise = Elementwise(i); });
    auto* ropeFusion = addCheck(
        sched, QStringLiteral("rope_fusion"), QStringLiteral("RoPE fusion"),
        QStringLiteral("With fused elementwise ops: the rotary embedding in its fused kernel "
                       "(Megatron's default); off, the rotate-half form in eager PyTorch ops, "
                       "five kernels on Q and on K each way (Megatron --no-rope-fusion, "
                       "Hugging Face models)"),
        [](const Plan& p) { return p.rope_fusion; },
        [](Scenario& s, bool v) { s.plan.rope_fusion = v; });
    enableWhen(ropeFusion,
               [](const Scenario& s) { return s.plan.elementwise == Elementwise::Fused; });
    addCombo(sched, QStringLiteral("fp8_recipe"), QStringLiteral("FP8 scaling"),
             names({"current", "delayed"}),
             QStringLiteral("FP8 models: current scaling reads each tensor twice (amax, then "
                            "cast: torchtitan, Megatron --fp8-recipe tensorwise); delayed takes "
                            "the scale from the history and casts in one pass (Megatron and NeMo "
                            "default)"),
             [](Scenario& s, int i) { s.plan.fp8_recipe = Fp8Recipe(i); });
    addCombo(sched, QStringLiteral("fp8_linear"), QStringLiteral("FP8 layers"),
             names({"Transformer Engine", "torchao Float8Linear"}),
             QStringLiteral("FP8 models: Transformer Engine saves the linear layers' inputs in "
                            "FP8 and keeps FP8 weight copies; torchao saves bf16 inputs and "
                            "keeps no copies"),
             [](Scenario& s, int i) { s.plan.fp8_linear = Fp8Linear(i); });
    auto* fp8Gather = addCheck(
        sched, QStringLiteral("fp8_param_gather"), QStringLiteral("FP8 weight gather"),
        QStringLiteral("FP8 models: the linear layers' weights are all-gathered at 1 byte "
                       "(Megatron --fp8-param-gather, NeMo fp8_params, torchtitan "
                       "enable_fsdp_float8_all_gather); with Transformer Engine the weights "
                       "are kept in FP8 and the forward casts none"),
        [](const Plan& p) { return p.fp8_param_gather; },
        [](Scenario& s, bool v) { s.plan.fp8_param_gather = v; });
    // A BF16 model has no FP8 weights to gather (the plan would be refused);
    // the box stays usable to switch a stray setting off.
    enableWhen(fp8Gather, [](const Scenario& s) {
        return s.model.dtype == DType::FP8 || s.plan.fp8_param_gather;
    });
    // CrossEntropy's order.
    addCombo(
        sched, QStringLiteral("cross_entropy"), QStringLiteral("Loss kernels"),
        names({"Megatron (fp32 passes)", "Megatron fused", "Transformer Engine", "PyTorch eager"}),
        QStringLiteral("The loss over the logits: Megatron-Core's default streams ~52 bytes "
                       "per logit through HBM, its --cross-entropy-loss-fusion ~40, "
                       "Transformer Engine's Triton kernels 6 (Megatron-Bridge), PyTorch's "
                       "F.cross_entropy ~48 (torchtitan)"),
        [](Scenario& s, int i) { s.plan.cross_entropy = CrossEntropy(i); });
    addCombo(sched, QStringLiteral("ep_dispatcher"), QStringLiteral("EP dispatch"),
             names({"all-to-all", "flex (DeepEP)", "flex (HybridEP)"}),
             QStringLiteral("MoE tokens to their experts: the all-to-all sends every (token, "
                            "expert) copy; flex sends a token once per host over the network "
                            "and fans it out over NVLink there; HybridEP also all-gathers "
                            "every rank's routing map before each forward's dispatch"),
             [](Scenario& s, int i) { s.plan.ep_dispatcher = EpDispatcher(i); });
    addDefaultedSpin(
        sched, QStringLiteral("ep_dispatcher_sms"), QStringLiteral("EP dispatch SMs"), 0, 1024,
        QStringLiteral("SMs the flex dispatcher's kernels hold (Megatron "
                       "--moe-flex-dispatcher-num-sms); beside another microbatch's compute "
                       "(EP overlap) the compute loses them. Default: DeepEP 20, HybridEP 24 "
                       "inside one host and 8 across hosts"),
        [](Scenario& s, int v) { s.plan.ep_dispatcher_sms = v; }, QStringLiteral("default"),
        [](const Scenario& s) {
            return s.plan.parallelism.ep > 1 && s.plan.ep_dispatcher != EpDispatcher::AllToAll;
        });
    // CpRing's order.
    addCombo(sched, QStringLiteral("cp_ring"), QStringLiteral("CP exchange"),
             names({"Transformer Engine p2p ring", "Transformer Engine all-gather",
                    "Transformer Engine all-to-all (Ulysses)", "PyTorch all-gather",
                    "PyTorch all-to-all"}),
             QStringLiteral("How context parallelism passes the attention's inputs: "
                            "Transformer Engine's ring (Megatron p2p) hides each K/V chunk "
                            "under the attention; its all-gather gathers K and V before it "
                            "and reduce-scatters their gradients after, exposed; its "
                            "all-to-all (a2a) trades sequence for heads around the "
                            "attention, exposed, and needs the heads and KV heads on a TP "
                            "rank to be multiples of cp; PyTorch's context_parallel "
                            "(torchtitan) waits for each step's exchange, merges the outputs "
                            "in fp32 with eager ops and sends the K/V gradients in fp32"),
             [](Scenario& s, int i) { s.plan.cp_ring = CpRing(i); });
    auto* cpA2a = addSpin(
        sched, QStringLiteral("cp_a2a_size"), QStringLiteral("CP all-to-all group"), 1, 1 << 16,
        QStringLiteral("With Transformer Engine's ring: 1 rings over all cp ranks; a divisor A of "
                       "cp below it all-to-alls Q, K and V over A neighbouring ranks first "
                       "(heads split over them) and rings over the cp / A groups (Megatron "
                       "--cp-comm-type a2a+p2p with --hierarchical-context-parallel-sizes A "
                       "cp/A)"),
        [](Scenario& s, int v) { s.plan.cp_a2a_size = v; });
    enableWhen(cpA2a, [](const Scenario& s) {
        return s.plan.parallelism.cp > 1 && s.plan.cp_ring == CpRing::TeP2p;
    });
    addCheck(
        sched, QStringLiteral("sequence_parallel"), QStringLiteral("Sequence parallel"),
        QStringLiteral("Megatron sequence parallelism with TP"),
        [](const Plan& p) { return p.sequence_parallel; },
        [](Scenario& s, bool v) { s.plan.sequence_parallel = v; });
    auto* regather = addCheck(
        sched, QStringLiteral("sequence_parallel_regather"), QStringLiteral("SP re-gather"),
        QStringLiteral("With sequence parallelism: keep the QKV and FC1 inputs as the sequence "
                       "shard and all-gather them again in the backward (Megatron-Core, "
                       "Transformer Engine); off, keep them gathered (torchtitan's DTensor "
                       "TP): no second gather, more activation memory"),
        [](const Plan& p) { return p.sequence_parallel_regather; },
        [](Scenario& s, bool v) { s.plan.sequence_parallel_regather = v; });
    // Without SP (or TP) there is nothing to gather again.
    enableWhen(regather, [](const Scenario& s) {
        return s.plan.sequence_parallel && s.plan.parallelism.tp > 1;
    });
    // Dropout probabilities, typed (nothing applies before Return).
    struct Dropout {
        const char *key, *label, *tip;
        double Plan::*field;
    };
    static const Dropout dropouts[] = {
        {"hidden_dropout", "Hidden dropout",
         "Dropout probability on the residual branches (Megatron --hidden-dropout, default 0.1; "
         "Llama recipes and torchtitan: none): a 1-byte mask per hidden value, written, kept "
         "and read back",
         &Plan::hidden_dropout},
        {"attention_dropout", "Attention dropout",
         "Dropout probability on the attention probabilities (Megatron --attention-dropout, "
         "default 0.1): ~3% on a fused attention kernel, a pass over the scores and their mask "
         "for the unfused one",
         &Plan::attention_dropout}};
    for (const Dropout& d : dropouts)
        addDouble(sched, {QLatin1String(d.key), QString::fromUtf8(d.label),
                          QString::fromUtf8(d.tip), QString(), QStringLiteral("none"), 0, 0.99,
                          0.05, 2, [field = d.field](const Scenario& s) { return s.plan.*field; },
                          [field = d.field](Scenario& s, double v) {
                              s.plan.*field = v;
                              return true;
                          }});
    addCheck(
        sched, QStringLiteral("grad_accumulation_fusion"), QStringLiteral("Grad accum. fusion"),
        QStringLiteral("The weight-gradient GEMMs add into the accumulated gradients "
                       "(Megatron's default); off, each microbatch's gradients are added "
                       "in a pass of their own (Megatron --no-gradient-accumulation-fusion, "
                       "NeMo's default, DeepSpeed, torchtitan's FSDP2)"),
        [](const Plan& p) { return p.grad_accumulation_fusion; },
        [](Scenario& s, bool v) { s.plan.grad_accumulation_fusion = v; });
    addCheck(
        sched, QStringLiteral("tp_comm_overlap"), QStringLiteral("TP comm overlap"),
        QStringLiteral("TP all-gathers and reduce-scatters under the GEMMs next to them "
                       "(Megatron --tp-comm-overlap, torchtitan AsyncTP; needs sequence "
                       "parallel)"),
        [](const Plan& p) { return p.tp_comm_overlap; },
        [](Scenario& s, bool v) { s.plan.tp_comm_overlap = v; });
    addCheck(
        sched, QStringLiteral("cuda_graphs"), QStringLiteral("CUDA graphs"),
        QStringLiteral("Each layer's kernels replayed from a CUDA graph, so the host issues "
                       "a layer at once instead of op by op (Megatron --cuda-graph-impl); "
                       "a dropless MoE layer's experts stay host-issued"),
        [](const Plan& p) { return p.cuda_graphs; },
        [](Scenario& s, bool v) { s.plan.cuda_graphs = v; });
    addCheck(
        sched, QStringLiteral("p2p_overlap"), QStringLiteral("P2P overlap"),
        QStringLiteral("Pipeline sends beside the next compute (Megatron's interleaved "
                       "schedule); off, a stage waits for each send as Megatron's 1F1B, "
                       "NeMo and torchtitan's Schedule1F1B do"),
        [](const Plan& p) { return p.p2p_overlap; },
        [](Scenario& s, bool v) { s.plan.p2p_overlap = v; });
    addCheck(
        sched, QStringLiteral("ep_overlap"), QStringLiteral("EP overlap"),
        QStringLiteral("MoE all-to-all beside another microbatch's compute (Megatron "
                       "--overlap-moe-expert-parallel-comm: combined 1F1B; with EP, and "
                       "under PP with interleaving)"),
        [](const Plan& p) { return p.ep_overlap; },
        [](Scenario& s, bool v) { s.plan.ep_overlap = v; });
    addCheck(
        sched, QStringLiteral("latency_hiding"), QStringLiteral("Latency-aware warm-up"),
        QStringLiteral("CrossPipe: extra warm-up forwards cover the P2P round trip of long "
                       "links (more activation memory)"),
        [](const Plan& p) { return p.schedule.latency_hiding; },
        [](Scenario& s, bool v) { s.plan.schedule.latency_hiding = v; });
    addCombo(sched, QStringLiteral("fsdp_reshard_after_forward"), QStringLiteral("FSDP reshard"),
             names({"default (not under PP)", "after every forward", "never"}),
             QStringLiteral("ZeRO-3: gather and reduce every microbatch, or once per step "
                            "holding the whole stage (torchtitan's default under PP)"),
             [](Scenario& s, int i) { s.plan.fsdp_reshard_after_forward = FsdpReshard(i); });
    addCheck(
        sched, QStringLiteral("fsdp_copies"), QStringLiteral("FSDP copies"),
        QStringLiteral("ZeRO-3: each gather copied out to the parameters and each "
                       "microbatch's gradients into the reduce-scatter, passes over the "
                       "weights on the compute stream (PyTorch FSDP2, DeepSpeed ZeRO-3); "
                       "off, parameters and gradients are views of the buffers (FSDP1, "
                       "Megatron-FSDP)"),
        [](const Plan& p) { return p.fsdp_copies; },
        [](Scenario& s, bool v) { s.plan.fsdp_copies = v; });
    addLayersPerStage(sched);

    QFormLayout* dp = group(QStringLiteral("Data-parallel traffic"));
    QStringList algoNames;
    for (auto a : kAlgos)
        algoNames << QString::fromLatin1(toString(a));
    auto* algo = addCombo(dp, QStringLiteral("dp_algo"), QStringLiteral("DP collective"), algoNames,
                          QStringLiteral("Hierarchical: reduce-scatter inside a building, "
                                         "all-reduce across, all-gather inside"),
                          [](Scenario& s, int i) {
                              const auto a = kAlgos[std::size_t(i)];
                              if (a == CollectiveAlgo::Auto)
                                  s.plan.collectives.erase(Dim::DP);
                              else
                                  s.plan.collectives[Dim::DP] = a;
                          });
    refreshers_.push_back([this, algo] {
        const auto a = document_->scenario().plan.algoFor(Dim::DP);
        algo->setCurrentIndex(int(std::find(kAlgos.begin(), kAlgos.end(), a) - kAlgos.begin()));
    });
    addCheck(
        dp, QStringLiteral("dp_overlap"), QStringLiteral("Overlap with backward"),
        QStringLiteral("Overlap gradient traffic with the backward pass"),
        [](const Plan& p) { return p.dp_overlap; },
        [](Scenario& s, bool v) { s.plan.dp_overlap = v; });
    addCheck(
        dp, QStringLiteral("grad_reduce_scatter"), QStringLiteral("Reduce-scatter gradients"),
        QStringLiteral("ZeRO-1/2: reduce-scatter the gradients to the shard each rank steps "
                       "(Megatron's distributed optimizer, DeepSpeed's default); off, "
                       "all-reduce them, twice the bytes (DeepSpeed reduce_scatter false "
                       "and its BF16_Optimizer, PyTorch's ZeroRedundancyOptimizer)"),
        [](const Plan& p) { return p.grad_reduce_scatter; },
        [](Scenario& s, bool v) { s.plan.grad_reduce_scatter = v; });
    addCombo(dp, QStringLiteral("grad_reduce_bytes"), QStringLiteral("Gradients"),
             names({"fp32 (4 B per element)", "bf16 (2 B per element)"}),
             QStringLiteral("The main-grad buffer's dtype, reduced as it is (Megatron-Core keeps "
                            "bf16 by default; the optimizer then holds an fp32 copy)"),
             [](Scenario& s, int i) { s.plan.grad_reduce_bytes = i == 0 ? 4 : 2; });
    // OptimizerMoments' and MasterWeights' orders.
    addCombo(
        dp, QStringLiteral("optimizer_moments"), QStringLiteral("Adam moments"),
        names({"fp32 (4 + 4 B)", "bf16 (2 + 2 B)"}),
        QStringLiteral("The optimizer's two moments per parameter (bf16: Megatron's "
                       "precision-aware optimizer, Apex DistributedFusedAdam with dtype bf16)"),
        [](Scenario& s, int i) { s.plan.optimizer_moments = OptimizerMoments(i); });
    addCombo(dp, QStringLiteral("master_weights"), QStringLiteral("Master weights"),
             names({"fp32 (4 B)", "16-bit (2 B)", "none (bf16 weights)"}),
             QStringLiteral("The optimizer's master copy of each weight: fp32, 16 bits (Apex's "
                            "BF16 remainders under NeMo, Megatron's --main-params-dtype fp16) or "
                            "none (the bf16 weights are stepped in place)"),
             [](Scenario& s, int i) { s.plan.master_weights = MasterWeights(i); });
    // OptimizerImpl's order.
    addCombo(dp, QStringLiteral("optimizer_implementation"), QStringLiteral("Optimizer kernels"),
             names({"fused", "foreach (a pass per op)"}),
             QStringLiteral("The optimizer step: one fused kernel (Apex and Transformer Engine "
                            "FusedAdam, PyTorch AdamW(fused=True), torchtitan's default since "
                            "2025-02) or PyTorch's foreach AdamW, a pass over the state per op "
                            "(torchtitan's default before)"),
             [](Scenario& s, int i) { s.plan.optimizer_implementation = OptimizerImpl(i); });
    addSpin(dp, QStringLiteral("dp_bucket_mib"), QStringLiteral("Bucket (MiB)"), 1, 65536,
            QStringLiteral("Gradient bucket size"),
            [](Scenario& s, int v) { s.plan.dp_bucket_mib = v; });

    buildRunGroups(content, column);

    linkBox_ = new QGroupBox(QStringLiteral("Link technologies"), content);
    linkForm_ = new QFormLayout(linkBox_);
    linkForm_->setLabelAlignment(Qt::AlignRight);
    column->addWidget(linkBox_);

    QFormLayout* model = group(QStringLiteral("Model"));
    addSpin(model, QStringLiteral("layers"), QStringLiteral("Layers"), 1, 100000,
            QStringLiteral("Transformer layers"), [](Scenario& s, int v) {
                s.model.layers = v;
                if (s.plan.placement)
                    s.plan.placement->layers_per_stage.clear();
            });
    addSpin(model, QStringLiteral("hidden"), QStringLiteral("Hidden size"), 1, 1 << 20,
            QStringLiteral("Model width"), [](Scenario& s, int v) { s.model.hidden = v; });
    addSpin(model, QStringLiteral("ffn_hidden"), QStringLiteral("FFN hidden"), 1, 1 << 22,
            QStringLiteral("MLP width"), [](Scenario& s, int v) { s.model.ffn_hidden = v; });
    addSpin(model, QStringLiteral("heads"), QStringLiteral("Heads"), 1, 4096,
            QStringLiteral("Attention heads"), [](Scenario& s, int v) { s.model.heads = v; });
    addSpin(model, QStringLiteral("kv_heads"), QStringLiteral("KV heads"), 1, 4096,
            QStringLiteral("Key/value heads (GQA)"),
            [](Scenario& s, int v) { s.model.kv_heads = v; });
    buildClusterGroups(content, column);
    column->addStretch(1);
    // Never narrower than the form: the fields would be cut off at the right.
    scroll->setMinimumWidth(content->minimumSizeHint().width() +
                            scroll->verticalScrollBar()->sizeHint().width() + 4);

    // Read-back of every plain field from the scenario.
    auto spinValue = [this](const QString& field, std::function<int(const Scenario&)> read) {
        QSpinBox* box = spinBox(field);
        refreshers_.push_back([this, box, read] { box->setValue(read(document_->scenario())); });
    };
    spinValue(QStringLiteral("tp"), [](const Scenario& s) { return s.plan.parallelism.tp; });
    spinValue(QStringLiteral("cp"), [](const Scenario& s) { return s.plan.parallelism.cp; });
    spinValue(QStringLiteral("pp"), [](const Scenario& s) { return s.plan.parallelism.pp; });
    spinValue(QStringLiteral("dp"), [](const Scenario& s) { return s.plan.parallelism.dp; });
    spinValue(QStringLiteral("ep"), [](const Scenario& s) { return s.plan.parallelism.ep; });
    spinValue(QStringLiteral("etp"), [](const Scenario& s) { return s.plan.parallelism.etp; });
    spinValue(QStringLiteral("sequence_length"),
              [](const Scenario& s) { return int(s.plan.sequence_length); });
    spinValue(QStringLiteral("global_batch_sequences"),
              [](const Scenario& s) { return int(s.plan.global_batch_sequences); });
    spinValue(QStringLiteral("micro_batch_sequences"),
              [](const Scenario& s) { return int(s.plan.micro_batch_sequences); });
    spinValue(QStringLiteral("virtual_stages"),
              [](const Scenario& s) { return s.plan.schedule.virtual_stages; });
    spinValue(QStringLiteral("dp_bucket_mib"),
              [](const Scenario& s) { return int(s.plan.dp_bucket_mib); });
    spinValue(QStringLiteral("layers"), [](const Scenario& s) { return s.model.layers; });
    spinValue(QStringLiteral("hidden"), [](const Scenario& s) { return int(s.model.hidden); });
    spinValue(QStringLiteral("ffn_hidden"),
              [](const Scenario& s) { return int(s.model.ffn_hidden); });
    spinValue(QStringLiteral("heads"), [](const Scenario& s) { return s.model.heads; });
    spinValue(QStringLiteral("kv_heads"), [](const Scenario& s) { return s.model.kv_heads; });
    auto comboIndex = [this](const QString& field, std::function<int(const Scenario&)> read) {
        QComboBox* box = comboBox(field);
        refreshers_.push_back(
            [this, box, read] { box->setCurrentIndex(read(document_->scenario())); });
    };
    comboIndex(QStringLiteral("schedule"), [](const Scenario& s) {
        return int(std::find(kSchedules.begin(), kSchedules.end(), s.plan.schedule.kind) -
                   kSchedules.begin());
    });
    comboIndex(QStringLiteral("zero_stage"), [](const Scenario& s) { return s.plan.zero_stage; });
    spinValue(QStringLiteral("dp_shard"), [](const Scenario& s) {
        // HSDP across buildings: the sharding group its workers make.
        if (const std::optional<Plan> hsdp = outerHsdpAsDpShard(s.cluster, s.plan))
            return hsdp->dpShard();
        return s.plan.dpShard();
    });
    comboIndex(QStringLiteral("fsdp_reshard_after_forward"),
               [](const Scenario& s) { return int(s.plan.fsdp_reshard_after_forward); });
    comboIndex(QStringLiteral("optimizer_moments"),
               [](const Scenario& s) { return int(s.plan.optimizer_moments); });
    comboIndex(QStringLiteral("master_weights"),
               [](const Scenario& s) { return int(s.plan.master_weights); });
    comboIndex(QStringLiteral("optimizer_implementation"),
               [](const Scenario& s) { return int(s.plan.optimizer_implementation); });
    comboIndex(QStringLiteral("grad_reduce_bytes"),
               [](const Scenario& s) { return s.plan.grad_reduce_bytes == 4 ? 0 : 1; });
    comboIndex(QStringLiteral("attention_kernel"), [](const Scenario& s) {
        return s.plan.flash_attention ? int(s.plan.attention_kernel) : 4;
    });
    comboIndex(QStringLiteral("elementwise"),
               [](const Scenario& s) { return int(s.plan.elementwise); });
    comboIndex(QStringLiteral("framework"),
               [](const Scenario& s) { return s.plan.framework ? int(*s.plan.framework) + 1 : 0; });
    comboIndex(QStringLiteral("recompute_method"),
               [](const Scenario& s) { return int(s.plan.recompute_method); });
    spinValue(QStringLiteral("recompute_layers"),
              [](const Scenario& s) { return s.plan.recompute_layers; });
    comboIndex(QStringLiteral("fp8_recipe"),
               [](const Scenario& s) { return int(s.plan.fp8_recipe); });
    comboIndex(QStringLiteral("fp8_linear"),
               [](const Scenario& s) { return int(s.plan.fp8_linear); });
    comboIndex(QStringLiteral("cross_entropy"),
               [](const Scenario& s) { return int(s.plan.cross_entropy); });
    comboIndex(QStringLiteral("ep_dispatcher"),
               [](const Scenario& s) { return int(s.plan.ep_dispatcher); });
    comboIndex(QStringLiteral("cp_ring"), [](const Scenario& s) { return int(s.plan.cp_ring); });
    spinValue(QStringLiteral("cp_a2a_size"), [](const Scenario& s) { return s.plan.cp_a2a_size; });
    spinValue(QStringLiteral("ep_dispatcher_sms"),
              [](const Scenario& s) { return s.plan.ep_dispatcher_sms; });
    comboIndex(QStringLiteral("recompute"), [](const Scenario& s) {
        return int(std::find(kRecompute.begin(), kRecompute.end(), s.plan.recompute) -
                   kRecompute.begin());
    });
    connect(document_, &Document::scenarioChanged, this, &PlanInspector::refresh);
    connect(document_, &Document::clusterChanged, this, &PlanInspector::rebuildLinkEditors);
    connect(document_, &Document::clusterChanged, this, &PlanInspector::rebuildSelectors);
    if (!document_->isEmpty()) {
        rebuildLinkEditors();
        rebuildSelectors();
    }
    refresh();
}

QSpinBox* PlanInspector::spinBox(const QString& field) const {
    for (const auto& [f, w] : editors_)
        if (f == field)
            return qobject_cast<QSpinBox*>(w);
    return nullptr;
}

QComboBox* PlanInspector::comboBox(const QString& field) const {
    for (const auto& [f, w] : editors_)
        if (f == field)
            return qobject_cast<QComboBox*>(w);
    return nullptr;
}

QCheckBox* PlanInspector::checkBox(const QString& field) const {
    for (const auto& [f, w] : editors_)
        if (f == field)
            return qobject_cast<QCheckBox*>(w);
    return nullptr;
}

QDoubleSpinBox* PlanInspector::doubleSpinBox(const QString& field) const {
    for (const auto& [f, w] : editors_)
        if (f == field)
            return qobject_cast<QDoubleSpinBox*>(w);
    return nullptr;
}

QDoubleSpinBox* PlanInspector::addDouble(QFormLayout* form, const DoubleField& f) {
    auto* box = new QDoubleSpinBox(form->parentWidget());
    box->setDecimals(f.decimals);
    box->setRange(f.min, f.max);
    box->setSingleStep(f.step);
    box->setGroupSeparatorShown(true);
    box->setSuffix(f.suffix);
    box->setSpecialValueText(f.special);
    box->setToolTip(f.toolTip);
    box->setAccelerated(true);
    guardEditor(box);
    form->addRow(f.label, box);
    editors_.emplace_back(f.field, box);
    connect(box, &QDoubleSpinBox::valueChanged, this, [this, box, f](double v) {
        if (refreshing_ || document_->isEmpty())
            return;
        Scenario probe = document_->scenario();
        if (!f.write(probe, v)) // nothing selected to write to
            return;
        edit(box, f.field,
             QStringLiteral("Set %1 to %2").arg(f.label, box->textFromValue(v) + f.suffix),
             [&](Scenario& s) { f.write(s, v); });
    });
    refreshers_.push_back(
        [this, box, read = f.read] { box->setValue(read(document_->scenario())); });
    return box;
}

Building* PlanInspector::selectedBuilding(Scenario& s) const {
    const int i = buildingSelector_ ? buildingSelector_->currentIndex() : -1;
    return i >= 0 && i < int(s.cluster.buildings.size()) ? &s.cluster.buildings[std::size_t(i)]
                                                         : nullptr;
}

const Building* PlanInspector::selectedBuilding(const Scenario& s) const {
    return selectedBuilding(const_cast<Scenario&>(s));
}

Link* PlanInspector::selectedLink(Scenario& s) const {
    const int i = linkSelector_ ? linkSelector_->currentIndex() : -1;
    return i >= 0 && i < int(s.cluster.links.size()) ? &s.cluster.links[std::size_t(i)] : nullptr;
}

const Link* PlanInspector::selectedLink(const Scenario& s) const {
    return selectedLink(const_cast<Scenario&>(s));
}

// Layers per stage: typed as a list ("9, 8, 8, 9"; empty: an even split),
// applied on Enter or leaving the field; Balance puts the split that evens
// out the stages' times (core/cost/balance.h), Even drops the split.
// Megatron-Core's --recompute-modules: a button whose menu ticks the
// modules, read with selective recompute only (disabled otherwise).
void PlanInspector::addRecomputeModules(QFormLayout* form) {
    auto* button = new QToolButton(form->parentWidget());
    button->setObjectName(QStringLiteral("recompute_modules"));
    button->setPopupMode(QToolButton::InstantPopup);
    button->setToolButtonStyle(Qt::ToolButtonTextOnly);
    button->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    button->setToolTip(QStringLiteral(
        "With selective recompute, what the backward re-runs (Megatron-Core "
        "--recompute-modules): core_attn the attention core (its forward kernel again, also "
        "FlashAttention's), layernorm the norms, mlp a dense layer's MLP, moe an MoE layer "
        "whole with its all-to-alls, moe_act the experts' activation, shared_experts the "
        "shared experts"));
    auto* menu = new QMenu(button);
    for (RecomputeModule m : kAllRecomputeModules) {
        QAction* action = menu->addAction(QString::fromLatin1(toString(m)));
        action->setCheckable(true);
        connect(action, &QAction::toggled, this, [this, button, m](bool on) {
            edit(button, QStringLiteral("recompute_modules"),
                 QStringLiteral("%1 %2 recompute")
                     .arg(on ? QStringLiteral("Add") : QStringLiteral("Remove"),
                          QString::fromLatin1(toString(m))),
                 [&](Scenario& s) {
                     if (on)
                         s.plan.recompute_modules |= recomputeBit(m);
                     else
                         s.plan.recompute_modules &= ~recomputeBit(m);
                 });
        });
    }
    button->setMenu(menu);
    guardEditor(button);
    form->addRow(QStringLiteral("Recompute modules"), button);
    editors_.emplace_back(QStringLiteral("recompute_modules"), button);
    refreshers_.push_back([this, button, menu] {
        const Plan& p = document_->scenario().plan;
        const QSignalBlocker block(menu);
        const auto actions = menu->actions();
        for (std::size_t i = 0; i < kAllRecomputeModules.size(); ++i) {
            const QSignalBlocker blockAction(actions[qsizetype(i)]);
            actions[qsizetype(i)]->setChecked(p.recompute_modules &
                                              recomputeBit(kAllRecomputeModules[i]));
        }
        const bool selective = p.recompute == Recompute::Selective;
        button->setEnabled(selective);
        const QString text = QString::fromStdString(recomputeModulesText(p.recompute_modules));
        button->setText(!selective       ? QStringLiteral("(selective only)")
                        : text.isEmpty() ? QStringLiteral("none")
                                         : text);
    });
}

void PlanInspector::addLayersPerStage(QFormLayout* form) {
    auto* row = new QWidget(form->parentWidget());
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    layersEdit_ = new QLineEdit(row);
    layersEdit_->setObjectName(QStringLiteral("layers_per_stage"));
    layersEdit_->setPlaceholderText(QStringLiteral("even split"));
    layersEdit_->setToolTip(QStringLiteral("Layers of each pipeline stage, first to last, "
                                           "comma-separated; empty: an even split"));
    guardEditor(layersEdit_);
    auto* balance = new QToolButton(row);
    balance->setObjectName(QStringLiteral("balanceLayers"));
    balance->setText(QStringLiteral("Balance"));
    balance->setToolTip(QStringLiteral("Give each stage layers in proportion to the speed of the "
                                       "building holding it (embedding and logits included)"));
    auto* even = new QToolButton(row);
    even->setObjectName(QStringLiteral("evenLayers"));
    even->setText(QStringLiteral("Even"));
    even->setToolTip(QStringLiteral("An even split (earlier stages take the remainder)"));
    h->addWidget(layersEdit_, 1);
    h->addWidget(balance);
    h->addWidget(even);
    form->addRow(QStringLiteral("Layers per stage"), row);
    editors_.emplace_back(QStringLiteral("layers_per_stage"), layersEdit_);
    auto setSplit = [this](const std::vector<int>& split, const QString& text) {
        edit(layersEdit_, QStringLiteral("layers_per_stage"), text, [&](Scenario& s) {
            if (split.empty()) {
                if (s.plan.placement) {
                    s.plan.placement->layers_per_stage.clear();
                    if (s.plan.placement->runs.empty())
                        s.plan.placement.reset();
                }
                return;
            }
            if (!s.plan.placement)
                s.plan.placement = Placement{};
            s.plan.placement->layers_per_stage = split;
        });
    };
    connect(layersEdit_, &QLineEdit::editingFinished, this, [this, setSplit] {
        if (refreshing_ || document_->isEmpty())
            return;
        ++editSession_;
        std::vector<int> split;
        const QStringList parts = layersEdit_->text().split(
            QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts);
        for (const QString& part : parts) {
            bool ok = false;
            const int v = part.toInt(&ok);
            if (!ok) {
                problem_ = QStringLiteral("'%1' is not a whole number of layers").arg(part);
                message_->setText(
                    QStringLiteral("Not applied: layers per stage\n%1").arg(problem_));
                messageBox_->show();
                markInvalid(layersEdit_, true);
                return;
            }
            split.push_back(v);
        }
        const auto& current = document_->scenario().plan.placement;
        if (split == (current ? current->layers_per_stage : std::vector<int>{}))
            return;
        setSplit(split, QStringLiteral("Set layers per stage"));
    });
    connect(balance, &QToolButton::clicked, this, [this, setSplit] {
        if (document_->isEmpty())
            return;
        const Scenario& s = document_->scenario();
        setSplit(balancedLayers(s.cluster, s.model, s.plan), QStringLiteral("Balance layers"));
    });
    connect(even, &QToolButton::clicked, this,
            [setSplit] { setSplit({}, QStringLiteral("Even layer split")); });
    refreshers_.push_back([this] {
        const auto& p = document_->scenario().plan.placement;
        QStringList parts;
        if (p)
            for (int l : p->layers_per_stage)
                parts << QString::number(l);
        layersEdit_->setText(parts.join(QStringLiteral(", ")));
    });
}

// The plan's outer sync, checkpoints and run (docs/RUN.md).
void PlanInspector::buildRunGroups(QWidget* content, QVBoxLayout* column) {
    QFormLayout* form = formGroup(content, column, QStringLiteral("Outer sync and run"));

    auto* method = addCombo(
        form, QStringLiteral("outer_sync"), QStringLiteral("Across buildings"),
        names({"synchronous DP", "DiLoCo", "Streaming DiLoCo", "HSDP"}),
        QStringLiteral("How DP replicas in different buildings synchronise: every step, or "
                       "DiLoCo's outer sync every H steps (docs/RUN.md)"),
        [](Scenario& s, int i) {
            if (i == 0) {
                s.plan.outer_sync.reset();
                return;
            }
            OuterSync o = s.plan.outer_sync.value_or(OuterSync{});
            o.method = i == 1   ? OuterSyncMethod::Diloco
                       : i == 2 ? OuterSyncMethod::StreamingDiloco
                                : OuterSyncMethod::Hsdp;
            if (o.method == OuterSyncMethod::Hsdp) {
                // HSDP has none of DiLoCo's knobs.
                OuterSync hsdp;
                hsdp.method = OuterSyncMethod::Hsdp;
                hsdp.inner_steps = 1;
                s.plan.outer_sync = hsdp;
                return;
            }
            if (o.inner_steps <= 1)
                o.inner_steps = 100;
            if (o.method == OuterSyncMethod::StreamingDiloco) {
                if (o.fragments <= 1)
                    o.fragments = std::min(4, o.inner_steps);
            } else {
                o.fragments = 1;
                o.overlap_steps = 1;
            }
            s.plan.outer_sync = o;
        });
    refreshers_.push_back([this, method] {
        const auto& o = document_->scenario().plan.outer_sync;
        method->setCurrentIndex(!o                                              ? 0
                                : o->method == OuterSyncMethod::Diloco          ? 1
                                : o->method == OuterSyncMethod::StreamingDiloco ? 2
                                                                                : 3);
    });
    // Fields of one method: a write without it is refused by the method
    // check (they are disabled then).
    auto outerSpin = [&](const QString& field, const QString& label, const QString& tip,
                         int OuterSync::*member, bool streamingOnly) {
        QSpinBox* spin =
            addSpin(form, field, label, 1, 1'000'000, tip, [member](Scenario& s, int v) {
                if (s.plan.outer_sync)
                    (*s.plan.outer_sync).*member = v;
            });
        refreshers_.push_back([this, spin, member, streamingOnly] {
            const auto& o = document_->scenario().plan.outer_sync;
            const bool on = o && o->method != OuterSyncMethod::Hsdp &&
                            (!streamingOnly || o->method == OuterSyncMethod::StreamingDiloco);
            spin->setEnabled(on);
            spin->setValue(on ? (*o).*member : (streamingOnly ? 1 : 100));
        });
    };
    outerSpin(QStringLiteral("inner_steps"), QStringLiteral("Inner steps (H)"),
              QStringLiteral("Steps each building trains alone between outer syncs"),
              &OuterSync::inner_steps, false);
    outerSpin(QStringLiteral("fragments"), QStringLiteral("Fragments"),
              QStringLiteral("Streaming DiLoCo: parameter pieces synced in turn"),
              &OuterSync::fragments, true);
    outerSpin(QStringLiteral("overlap_steps"), QStringLiteral("Overlap steps"),
              QStringLiteral("Streaming DiLoCo: inner steps a fragment's sync may hide behind"),
              &OuterSync::overlap_steps, true);
    const std::vector<double> outerBytes = {4, 2, 1, 0.5};
    auto* bytes = addCombo(form, QStringLiteral("outer_bytes"), QStringLiteral("Outer gradients"),
                           names({"fp32 (4 B)", "bf16 (2 B)", "fp8 (1 B)", "4-bit (0.5 B)"}),
                           QStringLiteral("Bytes per element of the outer all-reduce"),
                           [outerBytes](Scenario& s, int i) {
                               if (s.plan.outer_sync)
                                   s.plan.outer_sync->outer_bytes = outerBytes[std::size_t(i)];
                           });
    refreshers_.push_back([this, bytes, outerBytes] {
        const auto& o = document_->scenario().plan.outer_sync;
        const bool on = o && o->method != OuterSyncMethod::Hsdp;
        bytes->setEnabled(on);
        const double b = on ? o->outer_bytes : 4;
        const auto it = std::find(outerBytes.begin(), outerBytes.end(), b);
        bytes->setCurrentIndex(it == outerBytes.end() ? -1 : int(it - outerBytes.begin()));
    });

    auto* interval =
        addSpin(form, QStringLiteral("checkpoint_interval"), QStringLiteral("Checkpoint every"), 0,
                std::numeric_limits<int>::max(),
                QStringLiteral("Steps between checkpoints; optimal: the Young/Daly interval"),
                [](Scenario& s, int v) { s.plan.checkpoint.interval_steps = v; });
    interval->setSpecialValueText(QStringLiteral("optimal (Young/Daly)"));
    interval->setSuffix(QStringLiteral(" steps"));
    refreshers_.push_back([this, interval] {
        interval->setValue(
            int(std::min<std::int64_t>(document_->scenario().plan.checkpoint.interval_steps,
                                       std::numeric_limits<int>::max())));
    });
    addCheck(
        form, QStringLiteral("checkpoint_async"), QStringLiteral("Async checkpoints"),
        QStringLiteral("The step pauses only for the copy to host memory"),
        [](const Plan& p) { return p.checkpoint.async; },
        [](Scenario& s, bool v) { s.plan.checkpoint.async = v; });
    addDouble(form, {QStringLiteral("token_budget"), QStringLiteral("Token budget"),
                     QStringLiteral("Tokens the run trains on, in billions (the run's totals "
                                    "need it)"),
                     QStringLiteral(" B tokens"), QStringLiteral("none"), 0, 1e9, 100, 1,
                     [](const Scenario& s) { return s.plan.token_budget / 1e9; },
                     [](Scenario& s, double v) {
                         s.plan.token_budget = v * 1e9;
                         return true;
                     }});
    addDouble(form, {QStringLiteral("target_loss"), QStringLiteral("Target loss"),
                     QStringLiteral("The loss the run must reach; none: synchronous DP's at "
                                    "the token budget"),
                     QString(), QStringLiteral("synchronous DP's"), 0, 100, 0.01, 3,
                     [](const Scenario& s) { return s.plan.target_loss; },
                     [](Scenario& s, double v) {
                         s.plan.target_loss = v;
                         return true;
                     }});
}

// Per building and per link: reliability, storage, stragglers, prices and
// power (docs/RUN.md), for the building or link chosen at the top.
void PlanInspector::buildClusterGroups(QWidget* content, QVBoxLayout* column) {
    QFormLayout* form = formGroup(content, column, QStringLiteral("Building"));
    buildingSelector_ = new QComboBox(form->parentWidget());
    buildingSelector_->setObjectName(QStringLiteral("buildingSelector"));
    buildingSelector_->setToolTip(QStringLiteral("The building the fields below edit"));
    guardEditor(buildingSelector_);
    form->addRow(QStringLiteral("Building"), buildingSelector_);
    connect(buildingSelector_, &QComboBox::currentIndexChanged, this, &PlanInspector::refresh);

    using Member = double Building::*;
    auto field = [&](const QString& key, const QString& label, const QString& suffix,
                     const QString& special, double min, double max, double step, int decimals,
                     const QString& tip, Member m) {
        addDouble(form, {QStringLiteral("building/") + key, label, tip, suffix, special, min, max,
                         step, decimals,
                         [this, m, min](const Scenario& s) {
                             const Building* b = selectedBuilding(s);
                             return b ? b->*m : min;
                         },
                         [this, m](Scenario& s, double v) {
                             Building* b = selectedBuilding(s);
                             if (b)
                                 b->*m = v;
                             return b != nullptr;
                         }});
    };
    const QString dflt = QStringLiteral("default");
    // The building's size and fabric: integers through the same decimal
    // field (exact far beyond any GPU count).
    auto integer = [&](const QString& key, const QString& label, const QString& suffix,
                       const QString& special, double min, double max, const QString& tip,
                       std::function<double(const Building&)> get,
                       std::function<void(Building&, double)> set) {
        addDouble(form,
                  {QStringLiteral("building/") + key, label, tip, suffix, special, min, max, 1, 0,
                   [this, get, min](const Scenario& s) {
                       const Building* b = selectedBuilding(s);
                       return b ? get(*b) : min;
                   },
                   [this, set](Scenario& s, double v) {
                       Building* b = selectedBuilding(s);
                       if (b)
                           set(*b, v);
                       return b != nullptr;
                   }});
    };
    integer(
        QStringLiteral("gpus"), QStringLiteral("GPUs"), QString(), QString(), 1, 1e8,
        QStringLiteral("GPUs in the building (a whole number of hosts)"),
        [](const Building& b) { return double(b.gpus); },
        [](Building& b, double v) { b.gpus = std::int64_t(std::llround(v)); });
    integer(
        QStringLiteral("gpus_per_host"), QStringLiteral("GPUs per host"), QString(), QString(), 1,
        1024, QStringLiteral("The NVLink domain: TP stays inside it"),
        [](const Building& b) { return double(b.gpus_per_host); },
        [](Building& b, double v) { b.gpus_per_host = int(std::lround(v)); });
    integer(
        QStringLiteral("zone_gpus"), QStringLiteral("Zone"), QStringLiteral(" GPUs"),
        QStringLiteral("one zone"), 0, 1e8,
        QStringLiteral("GPUs per non-blocking zone (pod); traffic between zones shares the "
                       "zone uplinks"),
        [](const Building& b) { return double(b.zone_gpus); },
        [](Building& b, double v) { b.zone_gpus = std::int64_t(std::llround(v)); });
    field(QStringLiteral("scale_up_gbps"), QStringLiteral("NVLink per GPU"),
          QStringLiteral(" Gbit/s"), QString(), 0, top(formats::kScaleUpGbpsRange), 100, 0,
          QStringLiteral("Scale-up bandwidth per GPU, one direction"), &Building::scale_up_gbps);
    field(QStringLiteral("scale_out_gbps"), QStringLiteral("NIC per GPU"),
          QStringLiteral(" Gbit/s"), QString(), 0, top(formats::kScaleOutGbpsRange), 100, 0,
          QStringLiteral("Scale-out (NIC) bandwidth per GPU"), &Building::scale_out_gbps);
    field(QStringLiteral("zone_oversubscription"), QStringLiteral("Zone oversubscription"),
          QStringLiteral(":1"), QString(), 1, top(formats::kOversubscriptionRange), 0.5, 2,
          QStringLiteral("Zone to building spine"), &Building::zone_oversubscription);
    field(QStringLiteral("building_oversubscription"), QStringLiteral("Building oversubscription"),
          QStringLiteral(":1"), QString(), 1, top(formats::kOversubscriptionRange), 0.5, 2,
          QStringLiteral("Building fabric to the inter-building aggregation"),
          &Building::building_oversubscription);
    field(QStringLiteral("gpu_mtbf_hours"), QStringLiteral("GPU MTBF"), QStringLiteral(" h"),
          QStringLiteral("default (Llama 3)"), 0, top(formats::kMtbfHoursRange), 10000, 0,
          QStringLiteral("Mean time between GPU-caused interruptions, per GPU"),
          &Building::gpu_mtbf_hours);
    field(QStringLiteral("host_mtbf_hours"), QStringLiteral("Host MTBF"), QStringLiteral(" h"),
          QStringLiteral("default (Llama 3)"), 0, top(formats::kMtbfHoursRange), 10000, 0,
          QStringLiteral("Mean time between other interruptions, per host"),
          &Building::host_mtbf_hours);
    field(QStringLiteral("restart_s"), QStringLiteral("Restart"), QStringLiteral(" s"), dflt, 0,
          top(formats::kRestartSRange), 60, 0,
          QStringLiteral("Detect, reschedule and re-initialise (the checkpoint read is added)"),
          &Building::restart_s);
    field(QStringLiteral("storage_write_gbps"), QStringLiteral("Storage write"),
          QStringLiteral(" Gbit/s"), dflt, 0, top(formats::kStorageGbpsRange), 1000, 0,
          QStringLiteral("Checkpoint write bandwidth of the whole building"),
          &Building::storage_write_gbps);
    field(QStringLiteral("storage_read_gbps"), QStringLiteral("Storage read"),
          QStringLiteral(" Gbit/s"), QStringLiteral("as write"), 0, top(formats::kStorageGbpsRange),
          1000, 0, QStringLiteral("Checkpoint read bandwidth on restart"),
          &Building::storage_read_gbps);
    field(QStringLiteral("straggler_slowdown"), QStringLiteral("Slowest GPU"), QStringLiteral("×"),
          QStringLiteral("no straggler"), 1, top(formats::kStragglerRange), 0.01, 3,
          QStringLiteral("The slowest GPU's compute time over the others' (a synchronous step "
                         "waits for it)"),
          &Building::straggler_slowdown);
    field(QStringLiteral("step_jitter"), QStringLiteral("Step jitter"), QString(),
          QStringLiteral("none"), 0, top(formats::kStepJitterRange), 0.01, 3,
          QStringLiteral("Coefficient of variation of one GPU's compute time from step to step"),
          &Building::step_jitter);
    field(QStringLiteral("gpu_hour_usd"), QStringLiteral("GPU-hour price"),
          QStringLiteral(" $/GPU-h"), QStringLiteral("not priced"), 0,
          top(formats::kGpuHourUsdRange), 0.1, 2, QStringLiteral("Dollars per GPU-hour"),
          &Building::gpu_hour_usd);
    field(QStringLiteral("host_power_w"), QStringLiteral("Host power"), QStringLiteral(" W"), dflt,
          0, top(formats::kHostPowerWRange), 100, 0,
          QStringLiteral("Per host besides its GPUs (CPUs, memory, NICs, fans)"),
          &Building::host_power_w);
    field(QStringLiteral("network_power_w_per_gpu"), QStringLiteral("Network power"),
          QStringLiteral(" W/GPU"), dflt, 0, top(formats::kNetworkPowerWRange), 10, 0,
          QStringLiteral("Switches and optics, per GPU"), &Building::network_power_w_per_gpu);
    field(QStringLiteral("pue"), QStringLiteral("PUE"), QString(), QStringLiteral("default (1.2)"),
          0, top(formats::kPueRange), 0.01, 2, QStringLiteral("Power usage effectiveness (≥ 1)"),
          &Building::pue);

    QFormLayout* lform = formGroup(content, column, QStringLiteral("Link"));
    linkRunBox_ = lform->parentWidget();
    auto* routing = addCombo(
        lform, QStringLiteral("routing"), QStringLiteral("Routing"),
        names({"the cluster's", "shortest-hops", "lowest-latency", "ecmp"}),
        QStringLiteral("How the job's traffic between two buildings picks its links (plan "
                       "override of the cluster's policy; docs/COST_MODEL.md \"Routing\")"),
        [](Scenario& s, int i) {
            if (i == 0) {
                s.plan.routing.reset();
                return;
            }
            Routing r = s.plan.routing.value_or(s.cluster.routing);
            r.policy = RoutingPolicy(i - 1);
            s.plan.routing = r;
        });
    refreshers_.push_back([this, routing] {
        const auto& r = document_->scenario().plan.routing;
        routing->setCurrentIndex(r ? int(r->policy) + 1 : 0);
    });
    linkSelector_ = new QComboBox(linkRunBox_);
    linkSelector_->setObjectName(QStringLiteral("linkSelector"));
    linkSelector_->setToolTip(QStringLiteral("The link the fields below edit"));
    guardEditor(linkSelector_);
    lform->addRow(QStringLiteral("Link"), linkSelector_);
    connect(linkSelector_, &QComboBox::currentIndexChanged, this, &PlanInspector::refresh);
    using LinkMember = double Link::*;
    auto linkField = [&](const QString& key, const QString& label, const QString& suffix,
                         const QString& special, double max, double step, int decimals,
                         double scale, const QString& tip, LinkMember m) {
        addDouble(lform, {QStringLiteral("link/") + key, label, tip, suffix, special, 0, max, step,
                          decimals,
                          [this, m, scale](const Scenario& s) {
                              const Link* l = selectedLink(s);
                              return l ? l->*m * scale : 0.0;
                          },
                          [this, m, scale](Scenario& s, double v) {
                              Link* l = selectedLink(s);
                              if (l)
                                  l->*m = v / scale;
                              return l != nullptr;
                          }});
    };
    // NCCL's knobs on the chosen link: plan overrides of its technology's
    // (0 keeps the technology's; a given knob re-derives the flows).
    auto knob = [&](const QString& key, const QString& label, const QString& suffix, double max,
                    const QString& tip, std::function<double(const LinkOverride&)> get,
                    std::function<void(LinkOverride&, double)> set) {
        addDouble(lform, {QStringLiteral("link/") + key, label, tip, suffix,
                          QStringLiteral("technology's"), 0, max, 1, 0,
                          [this, get](const Scenario& s) {
                              const Link* l = selectedLink(s);
                              if (!l)
                                  return 0.0;
                              const auto it = s.plan.link_technologies.find(l->name);
                              return it == s.plan.link_technologies.end() ? 0.0 : get(it->second);
                          },
                          [this, set](Scenario& s, double v) {
                              const Link* l = selectedLink(s);
                              if (!l)
                                  return false;
                              const std::string name = l->name;
                              LinkOverride& o = s.plan.link_technologies[name];
                              set(o, v);
                              if (o == LinkOverride{})
                                  s.plan.link_technologies.erase(name);
                              return true;
                          }});
    };
    auto intKnob = [&](const QString& key, const QString& label, int max, const QString& tip,
                       int LinkOverride::*m) {
        knob(
            key, label, QString(), max, tip, [m](const LinkOverride& o) { return double(o.*m); },
            [m](LinkOverride& o, double v) { o.*m = int(std::lround(v)); });
    };
    intKnob(QStringLiteral("nccl_channels"), QStringLiteral("NCCL channels"), 64,
            QStringLiteral("NCCL_MIN/MAX_NCHANNELS on this link (plan override)"),
            &LinkOverride::nccl_channels);
    intKnob(QStringLiteral("qps_per_connection"), QStringLiteral("QPs per connection"), 128,
            QStringLiteral("NCCL_IB_QPS_PER_CONNECTION (RoCE/IB; plan override)"),
            &LinkOverride::qps_per_connection);
    intKnob(QStringLiteral("sockets_per_connection"), QStringLiteral("Sockets per connection"), 64,
            QStringLiteral("NCCL_NSOCKS_PERTHREAD × NCCL_SOCKET_NTHREADS (TCP; plan override)"),
            &LinkOverride::sockets_per_connection);
    knob(
        QStringLiteral("buffsize_mib"), QStringLiteral("NCCL buffer"), QStringLiteral(" MiB"), 4096,
        QStringLiteral("NCCL_BUFFSIZE on this link (plan override)"),
        [](const LinkOverride& o) { return o.buffsize_mib; },
        [](LinkOverride& o, double v) { o.buffsize_mib = v; });
    linkField(QStringLiteral("bandwidth_gbps"), QStringLiteral("Bandwidth"),
              QStringLiteral(" Gbit/s"), QString(), top(formats::kLinkGbpsRange), 100, 0, 1,
              QStringLiteral("Capacity in each direction"), &Link::bandwidth_gbps);
    linkField(QStringLiteral("latency_ms"), QStringLiteral("Latency"), QStringLiteral(" ms"),
              QString(), top(formats::kLinkLatencyMsRange), 0.1, 3, 1, QStringLiteral("One way"),
              &Link::latency_ms);
    linkField(QStringLiteral("background_gbps"), QStringLiteral("Background"),
              QStringLiteral(" Gbit/s"), QStringLiteral("none"), top(formats::kLinkGbpsOrNoneRange),
              100, 0, 1,
              QStringLiteral("Others' traffic on the link, each direction (the job gets the "
                             "rest)"),
              &Link::background_gbps);
    linkField(QStringLiteral("price_per_gb_usd"), QStringLiteral("Transport price"),
              QStringLiteral(" $/GB"), QStringLiteral("not priced"),
              top(formats::kTransportPriceRange), 0.001, 4, 1,
              QStringLiteral("Dollars per GB carried (egress)"), &Link::price_per_gb_usd);
    // A fraction needs a degraded bandwidth: the first one set starts at
    // half the job's share of the link, then the next field adjusts it.
    addDouble(lform, {QStringLiteral("link/degraded_fraction"), QStringLiteral("Degraded"),
                      QStringLiteral("Share of the time the link runs at its degraded bandwidth"),
                      QStringLiteral(" % of the time"), QStringLiteral("never"), 0, 99.9, 0.5, 1,
                      [this](const Scenario& s) {
                          const Link* l = selectedLink(s);
                          return l ? l->degraded_fraction * 100 : 0.0;
                      },
                      [this](Scenario& s, double v) {
                          Link* l = selectedLink(s);
                          if (!l)
                              return false;
                          l->degraded_fraction = v / 100;
                          if (v > 0 && !(l->degraded_bandwidth_gbps > 0))
                              l->degraded_bandwidth_gbps =
                                  std::round(l->background_gbps +
                                             (l->bandwidth_gbps - l->background_gbps) / 2);
                          return true;
                      }});
    linkField(QStringLiteral("degraded_bandwidth_gbps"), QStringLiteral("Degraded bandwidth"),
              QStringLiteral(" Gbit/s"), QStringLiteral("not set"),
              top(formats::kLinkGbpsOrNoneRange), 100, 0, 1,
              QStringLiteral("The link's capacity while degraded (more than its background, "
                             "less than its bandwidth)"),
              &Link::degraded_bandwidth_gbps);
}

void PlanInspector::rebuildSelectors() {
    orderKeyValid_ = false; // a new cluster: the rank orders are placed again
    if (document_->isEmpty())
        return;
    const Cluster& c = document_->scenario().cluster;
    auto refill = [](QComboBox* box, const QStringList& items) {
        const QString current = box->currentText();
        QSignalBlocker block(box);
        box->clear();
        box->addItems(items);
        const int i = box->findText(current);
        box->setCurrentIndex(i >= 0 ? i : (items.isEmpty() ? -1 : 0));
    };
    QStringList buildings, links;
    for (const Building& b : c.buildings)
        buildings << QString::fromStdString(b.name);
    for (const Link& l : c.links)
        links << QString::fromStdString(l.name);
    refill(buildingSelector_, buildings);
    refill(linkSelector_, links);
    linkRunBox_->setVisible(!links.isEmpty());
    refresh();
}

QSpinBox* PlanInspector::addSpin(QFormLayout* form, const QString& field, const QString& label,
                                 int min, int max, const QString& toolTip,
                                 std::function<void(Scenario&, int)> write) {
    auto* box = new QSpinBox(form->parentWidget());
    box->setRange(min, max);
    box->setGroupSeparatorShown(true);
    box->setToolTip(toolTip);
    box->setAccelerated(true);
    guardEditor(box);
    form->addRow(label, box);
    editors_.emplace_back(field, box);
    connect(box, &QSpinBox::valueChanged, this, [this, box, field, label, write](int v) {
        edit(box, field, QStringLiteral("Set %1 to %2").arg(label).arg(v),
             [&](Scenario& s) { write(s, v); });
    });
    return box;
}

QComboBox* PlanInspector::addCombo(QFormLayout* form, const QString& field, const QString& label,
                                   const QStringList& items, const QString& toolTip,
                                   std::function<void(Scenario&, int)> write) {
    auto* box = new QComboBox(form->parentWidget());
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(8);
    box->addItems(items);
    box->setToolTip(toolTip);
    guardEditor(box);
    form->addRow(label, box);
    editors_.emplace_back(field, box);
    connect(box, &QComboBox::currentIndexChanged, this, [this, box, field, label, write](int i) {
        if (i < 0)
            return;
        edit(box, field, QStringLiteral("Set %1 to %2").arg(label, box->itemText(i)),
             [&](Scenario& s) { write(s, i); });
    });
    return box;
}

QSpinBox* PlanInspector::addDefaultedSpin(QFormLayout* form, const QString& field,
                                          const QString& label, int min, int max,
                                          const QString& toolTip,
                                          std::function<void(Scenario&, int)> write,
                                          const QString& special, bool (*when)(const Scenario&)) {
    QSpinBox* box = addSpin(form, field, label, min, max, toolTip, std::move(write));
    box->setSpecialValueText(special);
    enableWhen(box, when);
    return box;
}

void PlanInspector::enableWhen(QWidget* editor, bool (*when)(const Scenario&)) {
    refreshers_.push_back(
        [this, editor, when] { editor->setEnabled(when(document_->scenario())); });
}

QCheckBox* PlanInspector::addCheck(QFormLayout* form, const QString& field, const QString& label,
                                   const QString& toolTip, bool (*read)(const Plan&),
                                   std::function<void(Scenario&, bool)> write) {
    auto* box = new QCheckBox(form->parentWidget());
    box->setToolTip(toolTip);
    guardEditor(box);
    form->addRow(label, box);
    editors_.emplace_back(field, box);
    refreshers_.push_back([this, box, read] { box->setChecked(read(document_->scenario().plan)); });
    connect(box, &QCheckBox::toggled, this, [this, box, field, label, write](bool on) {
        edit(box, field,
             QStringLiteral("%1 %2").arg(on ? QStringLiteral("Enable") : QStringLiteral("Disable"),
                                         label.toLower()),
             [&](Scenario& s) { write(s, on); });
    });
    return box;
}

void PlanInspector::rebuildLinkEditors() {
    while (linkForm_->rowCount() > 0)
        linkForm_->removeRow(0);
    linkRefreshers_.clear();
    const Cluster& cluster = document_->scenario().cluster;
    const QStringList techs = technologyNames(cluster);
    for (const Link& link : cluster.links) {
        const QString name = QString::fromStdString(link.name);
        auto* tech = new QComboBox(linkBox_);
        tech->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        tech->setMinimumContentsLength(10);
        tech->addItem(QStringLiteral("%1 (cluster)").arg(QString::fromStdString(link.technology)));
        tech->addItems(techs);
        tech->setToolTip(
            QStringLiteral("Transport on %1: the cluster's, or an override in the plan").arg(name));
        auto* flows = new QSpinBox(linkBox_);
        flows->setRange(0, 4096);
        flows->setSpecialValueText(QStringLiteral("default"));
        flows->setSuffix(QStringLiteral(" flows"));
        flows->setToolTip(QStringLiteral("Parallel flows or QPs per transfer (0: the "
                                         "technology's own)"));
        guardEditor(tech);
        guardEditor(flows);
        linkForm_->addRow(name, tech);
        linkForm_->addRow(QStringLiteral("flows"), flows);
        const std::string key = link.name;
        connect(tech, &QComboBox::currentIndexChanged, this, [this, tech, key, name](int i) {
            if (i < 0)
                return;
            edit(tech, QStringLiteral("link/") + name + QStringLiteral("/technology"),
                 QStringLiteral("Set %1 technology").arg(name), [&](Scenario& s) {
                     auto& o = s.plan.link_technologies[key];
                     o.technology = i == 0 ? std::string() : tech->itemText(i).toStdString();
                     if (o.technology.empty() && o.flows == 0)
                         s.plan.link_technologies.erase(key);
                 });
        });
        connect(flows, &QSpinBox::valueChanged, this, [this, flows, key, name](int v) {
            edit(flows, QStringLiteral("link/") + name + QStringLiteral("/flows"),
                 QStringLiteral("Set %1 flows to %2").arg(name).arg(v), [&](Scenario& s) {
                     auto& o = s.plan.link_technologies[key];
                     o.flows = v;
                     if (o.technology.empty() && o.flows == 0)
                         s.plan.link_technologies.erase(key);
                 });
        });
        linkRefreshers_.push_back([this, tech, flows, key] {
            const auto& overrides = document_->scenario().plan.link_technologies;
            const auto it = overrides.find(key);
            const std::string t = it == overrides.end() ? std::string() : it->second.technology;
            const int index = t.empty() ? 0 : tech->findText(QString::fromStdString(t));
            tech->setCurrentIndex(index < 0 ? 0 : index);
            flows->setValue(it == overrides.end() ? 0 : it->second.flows);
        });
    }
    linkBox_->setVisible(!cluster.links.empty());
    refresh();
}

void PlanInspector::refresh() {
    if (document_->isEmpty())
        return;
    refreshing_ = true;
    std::vector<std::unique_ptr<QSignalBlocker>> blockers;
    for (const auto& [field, widget] : editors_)
        blockers.push_back(std::make_unique<QSignalBlocker>(widget));
    for (auto& r : refreshers_)
        r();
    for (auto& r : linkRefreshers_)
        r();
    for (const auto& [field, widget] : editors_)
        widget->setProperty(kTypedProperty, false);
    // The document changed (an edit, undo, a drag, another file) or the
    // user dismissed the problem: it no longer describes what is shown.
    clearProblem();
    refreshing_ = false;
}

void PlanInspector::clearProblem() {
    problem_.clear();
    message_->clear();
    messageBox_->hide();
    if (invalidEditor_)
        markInvalid(invalidEditor_, false);
}

void PlanInspector::guardEditor(QWidget* editor) {
    // Not Qt::WheelFocus (the default of spin and combo boxes): a wheel
    // turned to scroll the inspector must not land in a field and change it.
    editor->setFocusPolicy(Qt::StrongFocus);
    if (auto* spin = qobject_cast<QAbstractSpinBox*>(editor)) {
        spin->setKeyboardTracking(false);
        connect(spin, &QAbstractSpinBox::editingFinished, this, [this, editor] {
            ++editSession_;
            editor->setProperty(kTypedProperty, false);
        });
    }
    // What the user typed and has not committed (Enter, focus-out) or
    // dropped (Escape, a refresh): the field's own Ctrl+Z undoes that; with
    // nothing typed, Ctrl+Z and Ctrl+Y are the document's.
    auto* line = qobject_cast<QLineEdit*>(editor);
    if (!line)
        line = editor->findChild<QLineEdit*>();
    if (line)
        connect(line, &QLineEdit::textEdited, this,
                [editor] { editor->setProperty(kTypedProperty, true); });
    editor->installEventFilter(this);
}

bool PlanInspector::eventFilter(QObject* watched, QEvent* event) {
    auto* editor = qobject_cast<QWidget*>(watched);
    if (!editor)
        return QWidget::eventFilter(watched, event);
    switch (event->type()) {
    case QEvent::Wheel:
        if (!editor->hasFocus() &&
            (qobject_cast<QAbstractSpinBox*>(editor) || qobject_cast<QComboBox*>(editor))) {
            // The scroll area's, as if the field were not there.
            QCoreApplication::sendEvent(scroll_->viewport(), event);
            return true;
        }
        break;
    case QEvent::FocusOut:
        // Spin boxes end their edit with editingFinished, after committing.
        if (!qobject_cast<QAbstractSpinBox*>(editor)) {
            ++editSession_;
            editor->setProperty(kTypedProperty, false);
        }
        break;
    case QEvent::ShortcutOverride: {
        // A field claims Ctrl+Z / Ctrl+Y for its own text; with nothing
        // typed there, they go to the application's undo and redo.
        auto* key = static_cast<QKeyEvent*>(event);
        if ((key->matches(QKeySequence::Undo) || key->matches(QKeySequence::Redo)) &&
            !editor->property(kTypedProperty).toBool()) {
            event->ignore();
            return true;
        }
        break;
    }
    case QEvent::KeyPress:
        if (static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape &&
            qobject_cast<QLineEdit*>(editor)) {
            refresh();
            return true;
        }
        if (static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape &&
            qobject_cast<QAbstractSpinBox*>(editor)) {
            // Drop what was typed: the field shows the plan's value again.
            refresh();
            if (auto* spin = qobject_cast<QAbstractSpinBox*>(editor))
                spin->selectAll();
            return true;
        }
        break;
    default:
        break;
    }
    return QWidget::eventFilter(watched, event);
}

void PlanInspector::markInvalid(QWidget* editor, bool invalid) {
    // The field whose edit was refused in red, one at a time. A palette and
    // not a style sheet: a style sheet's border changes the field's size
    // hint, and every row below it would move by a few pixels.
    if (invalid && invalidEditor_ && invalidEditor_ != editor)
        markInvalid(invalidEditor_, false);
    if (!invalid && editor != invalidEditor_)
        return;
    if (invalid) {
        QPalette pal = editor->palette();
        for (auto role : {QPalette::Base, QPalette::Button})
            pal.setColor(role, QColor(0xff, 0xe3, 0xe3));
        for (auto role : {QPalette::Text, QPalette::ButtonText})
            pal.setColor(role, QColor(0xa6, 0x1e, 0x1e));
        editor->setPalette(pal);
    } else {
        editor->setPalette(QPalette());
    }
    invalidEditor_ = invalid ? editor : nullptr;
}

void PlanInspector::edit(QWidget* editor, const QString& field, const QString& text,
                         const std::function<void(Scenario&)>& change) {
    if (refreshing_ || document_->isEmpty())
        return;
    Scenario next = document_->scenario();
    change(next);
    const auto problems = validateScenario(next);
    if (!problems.empty()) {
        if (invalidEditor_ && invalidEditor_ != editor) {
            // The earlier refusal is over: its field shows the document's
            // value again; this field keeps what was just typed.
            const QSignalBlocker block(editor);
            auto* spin = qobject_cast<QSpinBox*>(editor);
            auto* dspin = qobject_cast<QDoubleSpinBox*>(editor);
            auto* combo = qobject_cast<QComboBox*>(editor);
            auto* line = qobject_cast<QLineEdit*>(editor);
            auto* check = qobject_cast<QCheckBox*>(editor);
            const int i = spin ? spin->value() : combo ? combo->currentIndex() : 0;
            const double d = dspin ? dspin->value() : 0;
            const QString t = line ? line->text() : QString();
            const bool c = check && check->isChecked();
            refresh();
            if (spin)
                spin->setValue(i);
            if (dspin)
                dspin->setValue(d);
            if (combo)
                combo->setCurrentIndex(i);
            if (line)
                line->setText(t);
            if (check)
                check->setChecked(c);
        }
        QStringList lines;
        for (std::size_t i = 0; i < problems.size() && i < 3; ++i)
            lines << QString::fromStdString(problems[i].str());
        if (problems.size() > 3)
            lines << QStringLiteral("… and %1 more").arg(problems.size() - 3);
        problem_ = lines.join(QLatin1Char('\n'));
        message_->setText(QStringLiteral("Not applied: %1\n%2").arg(text, problem_));
        messageBox_->show();
        markInvalid(editor, true);
        // The fields keep their place; the viewport loses some height at
        // the bottom, so keep the refused field in sight once it has.
        QTimer::singleShot(0, this, [this, field = QPointer<QWidget>(editor)] {
            if (field)
                scroll_->ensureWidgetVisible(field, 0, 8);
        });
        return;
    }
    clearProblem();
    document_->setScenario(next, text,
                           QStringLiteral("inspector/%1#%2").arg(field).arg(editSession_));
}

} // namespace sa::views

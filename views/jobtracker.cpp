#include "jobtracker.h"

namespace sa::views {

JobTracker::JobTracker(QObject* context, int threads)
    : context_(context)
    , receiver_(std::make_unique<QObject>()) {
    if (context)
        receiver_->moveToThread(context->thread());
    pool_.setMaxThreadCount(threads < 1 ? 1 : threads);
    // Workers idle for a while are kept: an evaluation per drag event
    // should not pay for a thread start.
    pool_.setExpiryTimeout(30000);
}

JobTracker::~JobTracker() {
    cancel();
    waitForIdle();
    // Drops results still queued for delivery.
    receiver_.reset();
}

void JobTracker::cancel() {
    if (cancelFlag_)
        cancelFlag_->store(true);
    ++state_->generation;
    running_ = false;
}

void JobTracker::waitForIdle() {
    pool_.waitForDone();
    tsan::acquire(&pool_); // every job's end, see Runnable::run()
}

} // namespace sa::views

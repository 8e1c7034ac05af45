#include "jobtracker.h"

namespace sa::views {

JobTracker::JobTracker(QObject* context, int threads)
    : context_(context) {
    pool_.setMaxThreadCount(threads < 1 ? 1 : threads);
    // Workers idle for a while are kept: an evaluation per drag event
    // should not pay for a thread start.
    pool_.setExpiryTimeout(30000);
}

JobTracker::~JobTracker() {
    cancel();
    pool_.waitForDone();
}

void JobTracker::cancel() {
    if (cancelFlag_)
        cancelFlag_->store(true);
    ++state_->generation;
    running_ = false;
}

void JobTracker::waitForIdle() {
    pool_.waitForDone();
}

} // namespace sa::views

#pragma once
// Semantic checks on document values. The parsers run the per-document
// checks after reading (skipping paths that already failed); validateScenario
// runs them all, so a scenario built in code gets the same messages as one
// read from JSON.

#include "formats/json_check.h"

#include <vector>

namespace sa::formats {

// A building's reliability, storage, price and power fields (0: the
// default or not set), each with its key and range, for the parser and the
// checks alike.
struct BuildingRunField {
    const char* key;
    double Building::*member;
    const NumberRange* range;
};
extern const std::vector<BuildingRunField> kBuildingRunFields;

void checkCluster(const Cluster& c, Diagnostics& d);
void checkModel(const Model& m, Diagnostics& d);
void checkPlan(const Plan& p, Diagnostics& d);
// Checks between the documents; each problem goes to the document to fix.
void checkAcross(const Scenario& s, Diagnostics& cluster, Diagnostics& model, Diagnostics& plan);
// The same between a model and a plan alone (no cluster known: a plan
// exported to a framework); `cluster` is null and its checks are skipped.
void checkAcross(const Cluster* cluster, const Model& m, const Plan& p, Diagnostics& dc,
                 Diagnostics& dm, Diagnostics& dp);

} // namespace sa::formats

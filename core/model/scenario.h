#pragma once

#include "model/cluster.h"
#include "model/model.h"
#include "model/plan.h"

#include <string>

namespace sa {

struct Scenario {
    Cluster cluster;
    Model model;
    Plan plan;
    bool operator==(const Scenario&) const = default;
};

// One problem found in a document: the file, the JSON pointer inside it
// and what is wrong. str() gives "plan.json: /parallelism/tp: must be ...".
struct Diagnostic {
    std::string file;
    std::string path;
    std::string message;

    std::string str() const {
        std::string s = file.empty() ? std::string("<input>") : file;
        s += ": ";
        if (!path.empty()) {
            s += path;
            s += ": ";
        }
        s += message;
        return s;
    }
    bool operator==(const Diagnostic&) const = default;
};

} // namespace sa

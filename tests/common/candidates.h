#pragma once
// Every candidate of a design space, in key order (last axis fastest): for
// tests that enumerate a small space by brute force.

#include "explore/designspace.h"

#include <vector>

namespace sa::testing {

inline std::vector<Candidate> everyCandidate(const DesignSpace& space) {
    std::vector<Candidate> out;
    for (std::size_t s = 0; s < space.structureCount(); ++s) {
        Candidate c;
        c.structure = std::uint32_t(s);
        c.choice.assign(std::size_t(space.axisCount()), 0);
        while (true) {
            out.push_back(c);
            int a = space.axisCount() - 1;
            for (; a >= 0; --a) {
                if (++c.choice[std::size_t(a)] < space.choices(s, a))
                    break;
                c.choice[std::size_t(a)] = 0;
            }
            if (a < 0)
                break;
        }
    }
    return out;
}

} // namespace sa::testing

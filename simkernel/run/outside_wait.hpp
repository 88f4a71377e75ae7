// Where a rank stands in a wait outside the simulation it announced (services/outside_waits.hpp
// has the rules): part of its record, hence here, below the services that decide it.
#pragma once

namespace s4bxi::sim {

enum class OutsideWait {
    None,
    Others,  // in a collective that not every participant has entered: time may run
    Hold,    // comes back without the simulation: time waits for it
};

const char* to_string(OutsideWait wait);

}  // namespace s4bxi::sim

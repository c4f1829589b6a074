#pragma once
#include <stdexcept>
#include <string>

namespace kforge {

// Every error the core reports to a user carries a message that says what was wrong and with what.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace kforge

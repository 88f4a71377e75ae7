// --timeline-filter: which ranks and which window of simulated time a timeline shows.
// Shared by the launcher (which checks it before anything starts) and the server.
#pragma once

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>
#include <limits>
#include <utility>
#include <vector>

namespace s4bxi::timeline_filter {

struct Filter {
    std::vector<int> ranks;  // empty: all
    double window_start = 0.0;  // simulated seconds
    double window_end = std::numeric_limits<double>::infinity();
};

namespace detail {

inline std::string_view trim(std::string_view text)
{
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    return text;
}

inline int parse_rank(std::string_view text)
{
    text = trim(text);
    int value = -1;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0)
        throw std::invalid_argument("'" + std::string(text) + "' is not a rank (ranks=0-3,8)");
    return value;
}

// Seconds, with an optional unit: 2.5ms, 10us, 300ns, 1s, 0.001.
inline double parse_time(std::string_view text)
{
    text = trim(text);
    double scale = 1.0;
    for (auto [suffix, factor] : {std::pair{"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"s", 1.0}}) {
        std::string_view unit(suffix);
        if (text.size() > unit.size() && text.substr(text.size() - unit.size()) == unit) {
            text.remove_suffix(unit.size());
            scale = factor;
            break;
        }
    }
    std::string number(trim(text));
    size_t used = 0;
    double value = 0.0;
    try {
        value = std::stod(number, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (number.empty() || used != number.size() || !std::isfinite(value) || value < 0)
        throw std::invalid_argument("'" + number + "' is not a time (time=1ms:2.5ms, in s, ms, us or ns)");
    return value * scale;
}

}  // namespace detail

// "ranks=0-3,8;time=1ms:2ms", either part optional. Throws std::invalid_argument with the
// reason.
inline Filter parse(const std::string& text)
{
    using namespace detail;
    Filter options;
    std::string_view rest(text);
    while (!trim(rest).empty()) {
        size_t end = rest.find(';');
        std::string_view part = trim(rest.substr(0, end));
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        if (part.empty()) continue;
        size_t eq = part.find('=');
        std::string_view key = eq == std::string_view::npos ? part : trim(part.substr(0, eq));
        std::string_view value = eq == std::string_view::npos ? std::string_view() : trim(part.substr(eq + 1));
        if (key == "ranks") {
            if (value.empty()) throw std::invalid_argument("ranks= needs a list, e.g. ranks=0-3,8");
            while (!value.empty()) {
                size_t comma = value.find(',');
                std::string_view item = value.substr(0, comma);
                value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
                size_t dash = item.find('-');
                int first = parse_rank(item.substr(0, dash));
                int last = dash == std::string_view::npos ? first : parse_rank(item.substr(dash + 1));
                if (last < first) throw std::invalid_argument("the range " + std::string(item) + " is empty");
                for (int r = first; r <= last; ++r) options.ranks.push_back(r);
            }
        } else if (key == "time") {
            size_t colon = value.find(':');
            if (colon == std::string_view::npos)
                throw std::invalid_argument("time= needs START:END, e.g. time=1ms:2ms (either may be empty)");
            std::string_view start = trim(value.substr(0, colon)), stop = trim(value.substr(colon + 1));
            if (!start.empty()) options.window_start = parse_time(start);
            if (!stop.empty()) options.window_end = parse_time(stop);
            if (options.window_end <= options.window_start)
                throw std::invalid_argument("the time window ends before it starts");
        } else {
            throw std::invalid_argument("unknown part '" + std::string(part) +
                                        "' (expected ranks=LIST and/or time=START:END, separated by ';')");
        }
    }
    return options;
}

}  // namespace s4bxi::timeline_filter

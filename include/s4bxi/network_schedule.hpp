// Which network model runs when (docs/network-models.md, "Switching network models"): the value of
// network.model, "detailed", "flow", or a schedule of models at simulated dates,
// "flow@0,detailed@1.5ms,flow@20ms". The launcher (--network-model) and the server (the
// platform file, S4BXI_NETWORK_MODEL, --set) both read it here.
#pragma once

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace s4bxi::netmodel {

enum class Model : unsigned char { Detailed, Flow };

inline const char* name(Model model)
{
    return model == Model::Flow ? "flow" : "detailed";
}

inline std::optional<Model> model_named(std::string_view text)
{
    if (text == "detailed") return Model::Detailed;
    if (text == "flow") return Model::Flow;
    return std::nullopt;
}

// From `from` (simulated seconds) on, until the next phase's date.
struct Phase {
    Model model = Model::Detailed;
    double from = 0.0;
};

struct Schedule {
    std::vector<Phase> phases;  // dates strictly increasing, the first at 0
    std::string problem;        // empty when the text is valid
};

// "1.5ms", "20us", "300ns", "2s", "0", "0.002" (seconds): seconds, or nothing.
inline std::optional<double> parse_date(std::string_view text)
{
    static constexpr struct {
        std::string_view suffix;
        double scale;
    } kUnits[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
    double scale = 1.0;
    for (const auto& unit : kUnits)
        if (text.size() > unit.suffix.size() && text.ends_with(unit.suffix)) {
            text.remove_suffix(unit.suffix.size());
            scale = unit.scale;
            break;
        }
    if (text.empty()) return std::nullopt;
    std::string number(text);
    char* end = nullptr;
    double value = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !std::isfinite(value) || value < 0) return std::nullopt;
    // Whole nanoseconds: a date the simulation can reach exactly, printed back the same.
    return std::round(value * scale * 1e9) / 1e9;
}

// A schedule whose first date is after 0 runs the detailed model (the default) until it.
inline Schedule parse_schedule(std::string_view text)
{
    Schedule schedule;
    auto fail = [&](std::string why) {
        schedule.phases.clear();
        schedule.problem = std::move(why);
        return schedule;
    };
    if (text.find('@') == std::string_view::npos) {
        auto model = model_named(text);
        if (!model)
            return fail("'" + std::string(text) +
                        "' is not a network model: detailed, flow, or a schedule such as flow@0,detailed@1.5ms");
        schedule.phases.push_back({*model, 0.0});
        return schedule;
    }
    size_t start = 0;
    while (start <= text.size()) {
        size_t comma = text.find(',', start);
        std::string_view item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        size_t at = item.find('@');
        if (at == std::string_view::npos)
            return fail("'" + std::string(item) + "' in '" + std::string(text) + "': want MODEL@DATE, e.g. detailed@1.5ms");
        auto model = model_named(item.substr(0, at));
        if (!model)
            return fail("'" + std::string(item.substr(0, at)) + "' in '" + std::string(text) +
                        "' is not a network model: detailed or flow");
        auto date = parse_date(item.substr(at + 1));
        if (!date)
            return fail("'" + std::string(item.substr(at + 1)) + "' in '" + std::string(text) +
                        "' is not a date: a number of seconds, or with ns, us, ms or s, e.g. 1.5ms");
        if (!schedule.phases.empty() && *date <= schedule.phases.back().from)
            return fail("'" + std::string(item) + "' in '" + std::string(text) +
                        "': the dates must increase from one phase to the next");
        if (schedule.phases.empty() && *date > 0) schedule.phases.push_back({Model::Detailed, 0.0});
        if (!schedule.phases.empty() && schedule.phases.back().model == *model)
            return fail("'" + std::string(item) + "' in '" + std::string(text) + "': the model is already " +
                        name(*model) + " then");
        schedule.phases.push_back({*model, *date});
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return schedule;
}

// The model of the phase that holds `date` (a phase's own date belongs to it).
inline Model model_at(const std::vector<Phase>& phases, double date)
{
    Model model = Model::Detailed;
    for (const Phase& phase : phases) {
        if (phase.from > date) break;
        model = phase.model;
    }
    return model;
}

}  // namespace s4bxi::netmodel

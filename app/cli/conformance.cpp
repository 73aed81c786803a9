#include "runtime/conformance.h"

#include "commands.h"

#include <iostream>

namespace opscope::cli {

int runConformance(const ConformanceArgs &args)
{
    std::vector<std::filesystem::path> tests;
    for (const std::string &dir : args.dirs) {
        if (!std::filesystem::is_directory(dir)) {
            return reportError(Status::invalid("'" + dir + "' is not a folder"));
        }
        const auto found = findConformanceTests(dir);
        tests.insert(tests.end(), found.begin(), found.end());
    }
    ConformanceOptions options;
    options.threads = args.threads;
    options.rtol = args.rtol;
    options.atol = args.atol;
    int passed = 0, failed = 0, skipped = 0;
    for (const auto &dir : tests) {
        const ConformanceResult r = runConformanceTest(dir, options);
        switch (r.outcome) {
        case ConformanceResult::Outcome::Pass:
            ++passed;
            if (!args.quiet)
                std::cout << "pass         " << r.name << "  (max abs error " << r.maxAbsError << ")\n";
            break;
        case ConformanceResult::Outcome::Fail:
            ++failed;
            std::cout << "FAIL         " << r.name << "  " << r.detail << '\n';
            break;
        case ConformanceResult::Outcome::Unsupported:
            ++skipped;
            if (!args.quiet)
                std::cout << "unsupported  " << r.name << "  " << r.detail << '\n';
            break;
        case ConformanceResult::Outcome::InvalidData:
            ++skipped;
            if (!args.quiet)
                std::cout << "invalid      " << r.name << "  " << r.detail << '\n';
            break;
        }
    }
    std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
    return failed ? ExitUserError : ExitOk;
}

} // namespace opscope::cli

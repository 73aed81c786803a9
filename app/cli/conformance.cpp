#include "runtime/backend.h"
#include "runtime/conformance.h"

#include "commands.h"

#include <iostream>
#include <memory>

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
    std::unique_ptr<Backend> device;
    if (args.device != "cpu:0" && args.device != "cpu") {
        Expected<std::unique_ptr<Backend>> made = makeBackend(args.device, args.threads);
        if (!made)
            return reportError(made.status());
        device = std::move(*made);
        options.backend = device.get();
    }
    // On a device: how many calls of a test ran on the host instead (no kernel there).
    const auto fallbackCalls = [&device] {
        std::uint64_t n = 0;
        if (device)
            for (const HostFallback &f : device->hostFallbacks())
                n += f.calls;
        return n;
    };
    int passed = 0, failed = 0, skipped = 0, passedOnHost = 0;
    for (const auto &dir : tests) {
        const std::uint64_t before = fallbackCalls();
        const ConformanceResult r = runConformanceTest(dir, options);
        const bool hostPart = fallbackCalls() != before;
        switch (r.outcome) {
        case ConformanceResult::Outcome::Pass:
            ++passed;
            passedOnHost += hostPart;
            if (!args.quiet)
                std::cout << (hostPart ? "pass (host)  " : "pass         ") << r.name << "  (max abs error "
                          << r.maxAbsError << ")\n";
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
    std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped";
    if (device)
        std::cout << "; " << passed - passedOnHost << " of the passes ran every node on " << args.device << ", "
                  << passedOnHost << " ran some on the host CPU";
    std::cout << '\n';
    return failed ? ExitUserError : ExitOk;
}

} // namespace opscope::cli

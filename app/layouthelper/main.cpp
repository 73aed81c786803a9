// opscope-layout: lays out one graph and exits. The app runs Graphviz here, in a process of its
// own, because gvLayout cannot be interrupted in-process: a layout that runs past its time budget,
// or one the user cancels, is ended by killing this process (views/layoutservice.cpp).
//
//   opscope-layout [--engine dot|layered] < REQUEST > RESULT
//
// REQUEST and RESULT are core/layout/layoutio's encodings. Bad input: a message on stderr, exit 1.

#include "layout/graphlayout.h"
#include "layout/layered.h"
#include "layout/layoutio.h"

#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>

int main(int argc, char **argv)
{
    bool layered = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--engine" && i + 1 < argc) {
            const std::string e = argv[++i];
            if (e != "dot" && e != "layered") {
                std::fprintf(stderr, "opscope-layout: unknown engine '%s' (dot or layered)\n", e.c_str());
                return 1;
            }
            layered = e == "layered";
        } else if (a == "--help" || a == "-h") {
            std::printf("usage: opscope-layout [--engine dot|layered] < request > result\n"
                        "Lays out one graph for the opscope app (which runs and ends this helper).\n");
            return 0;
        } else {
            std::fprintf(stderr, "opscope-layout: unknown argument '%s' (try --help)\n", a.c_str());
            return 1;
        }
    }
    std::ios::sync_with_stdio(false);
    const std::string in((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    opscope::Expected<opscope::layout::LayoutRequest> request = opscope::layout::decodeRequest(in);
    if (!request) {
        std::fprintf(stderr, "opscope-layout: %s\n", request.status().message().c_str());
        return 1;
    }
    std::string out;
    if (layered) {
        out = opscope::layout::encodeResult(opscope::layout::layoutLayered(*request));
    } else {
        opscope::Expected<opscope::layout::LayoutResult> r = opscope::layout::layoutWithGraphviz(*request);
        if (!r) {
            std::fprintf(stderr, "opscope-layout: %s\n", r.status().message().c_str());
            return 1;
        }
        out = opscope::layout::encodeResult(*r);
    }
    if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) {
        std::fprintf(stderr, "opscope-layout: could not write the result: %s\n", std::strerror(errno));
        return 1;
    }
    return 0;
}

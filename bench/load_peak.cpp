// Peak memory of loading a model with embedded weights: as the app and the one-process commands
// load it (every weight on the heap) against as an MPI rank does (LoadOptions::mapEmbeddedWeights:
// parsed without the big raw_data fields, which are mapped from the file). Each load runs in a
// child process of its own, which reports its peak resident set (VmHWM) and its anonymous memory
// (RssAnon) once loaded.
//   load_peak MODEL.onnx
#include "onnx/modelio.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using namespace opscope;

namespace {

long statusKiB(const char *key)
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0)
            return std::stol(line.substr(std::string(key).size()));
    return -1;
}

void loadInChild(const char *path, bool mapped)
{
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        LoadOptions options;
        options.mapEmbeddedWeights = mapped;
        const Expected<ImportResult> r = loadModel(path, options);
        if (!r) {
            std::fprintf(stderr, "load_peak: %s\n", r.status().message().c_str());
            _exit(1);
        }
        std::printf("%-34s peak %8.1f MiB, anonymous once loaded %8.1f MiB\n",
                    mapped ? "rank (weights mapped)" : "app and CLI (weights on the heap)",
                    double(statusKiB("VmHWM:")) / 1024.0, double(statusKiB("RssAnon:")) / 1024.0);
        std::fflush(stdout);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: load_peak MODEL.onnx\n");
        return 1;
    }
    loadInChild(argv[1], false);
    loadInChild(argv[1], true);
    return 0;
}

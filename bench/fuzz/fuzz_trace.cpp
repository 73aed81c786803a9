// Chrome / Perfetto / PyTorch-profiler (Kineto) trace JSON as the app and `profile` import it.
#include "fuzztarget.h"

#include "trace/chrometrace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    (void)opscope::trace::readChromeTrace(opscope::fuzz::writeScratch("t.json", data, size));
    return 0;
}

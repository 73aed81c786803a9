// The tensor readers behind --input: .npy (header parsing, shapes, dtypes, sizes) and TensorProto
// .pb files. The first byte picks the reader; the rest is the file.
#include "fuzztarget.h"

#include "runtime/conformance.h"
#include "runtime/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace opscope;
    if (size == 0)
        return 0;
    if (data[0] & 1)
        (void)readNpy(fuzz::writeScratch("t.npy", data + 1, size - 1));
    else
        (void)readTensorFile(fuzz::writeScratch("t.pb", data + 1, size - 1));
    return 0;
}

// The CUDA module: device discovery and a kernel round trip. Skips cleanly without a GPU or
// driver (CI, developer machines); runs for real on the GPU check machine.

#include "cudadevices.h"

#include <QTest>

using namespace opscope;

class TestCudaDevices : public QObject
{
    Q_OBJECT
private slots:
    void runtimeIsLinked() { QVERIFY(gpu::cudaVersions().runtime >= 12000); }

    void noDeviceIsAnErrorValue()
    {
        const auto devices = gpu::cudaDevices();
        if (devices && !devices->empty())
            QSKIP("a CUDA device is present");
        if (!devices) {
            QCOMPARE(devices.status().kind(), ErrorKind::Unsupported);
            // No driver at all: say so, not the runtime's "driver version is insufficient" (a
            // new user read it as a version to upgrade). A driver that is there: the CUDA error.
            if (gpu::cudaDriverMissing())
                QVERIFY2(devices.status().message().find("no NVIDIA driver is installed") != std::string::npos,
                         devices.status().message().c_str());
            else
                QVERIFY(devices.status().message().find("cudaError") != std::string::npos);
        }
    }

    void selfTestOnEveryDevice()
    {
        const auto devices = gpu::cudaDevices();
        if (!devices || devices->empty())
            QSKIP("no CUDA device");
        for (const gpu::CudaDeviceInfo &d : *devices) {
            QVERIFY(!d.name.empty());
            QVERIFY(d.totalMemoryBytes > 0);
            const Status st = gpu::cudaSelfTest(d.index);
            QVERIFY2(st.isOk(), st.message().c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestCudaDevices)
#include "tst_cudadevices.moc"

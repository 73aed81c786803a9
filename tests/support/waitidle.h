#pragma once
// GUI tests: wait (processing events) until the window has nothing in flight — loading, layout,
// optimizing, profiling — or `ms` pass. Header-only: the support library does not link the app.

#include <QElapsedTimer>
#include <QTest>

namespace opscope::test {

template<class Window>
bool waitIdle(Window &w, int ms = 30000)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < ms) {
        QTest::qWait(20);
        if (!w.isBusy())
            return true;
    }
    return false;
}

} // namespace opscope::test

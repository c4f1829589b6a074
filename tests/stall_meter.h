#pragma once
// How long the event loop was kept from running: the longest gap between ticks of a 5 ms timer.
// Widget tests start it, drive the window (a live reload, an open) and assert on longestMs().
#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <algorithm>

namespace kforge::test {

class StallMeter {
public:
    StallMeter()
    {
        m_tick.setInterval(5);
        QObject::connect(&m_tick, &QTimer::timeout, [this] {
            const qint64 now = m_clock.elapsed();
            m_longest = std::max(m_longest, now - m_last);
            m_last = now;
        });
    }
    void start()
    {
        m_clock.start();
        m_last = 0;
        m_longest = 0;
        m_tick.start();
    }
    void stop()
    {
        const qint64 now = m_clock.elapsed(); // a stall that ends the measurement counts too
        m_longest = std::max(m_longest, now - m_last);
        m_tick.stop();
    }
    qint64 longestMs() const { return m_longest; }

private:
    QElapsedTimer m_clock;
    QTimer m_tick;
    qint64 m_last = 0, m_longest = 0;
};

} // namespace kforge::test

#include "llm/sse.h"

namespace kforge::llm {

void SseParser::feed(std::string_view bytes)
{
    m_buffer.append(bytes);
    size_t start = 0;
    for (;;) {
        const auto nl = m_buffer.find('\n', start);
        if (nl == std::string::npos)
            break;
        std::string_view l(m_buffer.data() + start, nl - start);
        if (!l.empty() && l.back() == '\r')
            l.remove_suffix(1);
        line(l);
        start = nl + 1;
    }
    m_buffer.erase(0, start);
}

void SseParser::finish()
{
    if (!m_buffer.empty()) {
        std::string rest;
        rest.swap(m_buffer);
        if (!rest.empty() && rest.back() == '\r')
            rest.pop_back();
        line(rest);
    }
    dispatch();
}

void SseParser::line(std::string_view l)
{
    if (l.empty()) {
        dispatch();
        return;
    }
    if (l.front() == ':')
        return;
    const auto colon = l.find(':');
    std::string_view field = l.substr(0, colon), value;
    if (colon != std::string_view::npos) {
        value = l.substr(colon + 1);
        if (!value.empty() && value.front() == ' ')
            value.remove_prefix(1);
    }
    if (field == "event") {
        m_event = value;
    } else if (field == "data") {
        if (m_hasData)
            m_data += '\n';
        m_data += value;
        m_hasData = true;
    }
}

void SseParser::dispatch()
{
    if (m_hasData)
        m_handler(m_event, m_data);
    m_event.clear();
    m_data.clear();
    m_hasData = false;
}

} // namespace kforge::llm

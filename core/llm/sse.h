#pragma once
// Server-sent events (the WHATWG rules the providers follow): lines of "field: value", an event ends
// at a blank line, "data" lines join with '\n', ':' lines are comments. Bytes may arrive split
// anywhere, CR LF or LF.
#include <functional>
#include <string>
#include <string_view>

namespace kforge::llm {

class SseParser {
public:
    using Handler = std::function<void(const std::string &event, const std::string &data)>;
    explicit SseParser(Handler handler) : m_handler(std::move(handler)) {}
    void feed(std::string_view bytes);
    void finish(); // an event the stream ended without its blank line

private:
    void line(std::string_view l);
    void dispatch();

    Handler m_handler;
    std::string m_buffer;
    std::string m_event;
    std::string m_data;
    bool m_hasData = false;
};

} // namespace kforge::llm

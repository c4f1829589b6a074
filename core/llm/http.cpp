#include "llm/http.h"

#include <algorithm>
#include <cctype>
#include <mutex>

#include <curl/curl.h>

namespace kforge::llm {

namespace {

void globalInit()
{
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
    CURL *curl = nullptr;
    const HttpRequest *request = nullptr;
    HttpResponse *response = nullptr;
    bool statusKnown = false;
    bool streaming = false;
    bool callbackFailed = false;
};

size_t onWrite(char *data, size_t size, size_t count, void *user)
{
    auto *t = static_cast<Transfer *>(user);
    const size_t n = size * count;
    if (!t->statusKnown) {
        curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &t->response->status);
        t->statusKnown = true;
        t->streaming = t->request->onData && t->response->status >= 200 && t->response->status < 300;
    }
    t->response->body.append(data, n);
    if (t->streaming) {
        try {
            t->request->onData(std::string_view(data, n));
        } catch (...) {
            t->callbackFailed = true;
            return 0; // aborts the transfer
        }
    }
    return n;
}

size_t onHeader(char *data, size_t size, size_t count, void *user)
{
    auto *t = static_cast<Transfer *>(user);
    const size_t n = size * count;
    std::string line(data, n);
    if (line.rfind("HTTP/", 0) == 0) { // a new response (after a 100 Continue or a redirect)
        t->response->headers.clear();
        return n;
    }
    const auto colon = line.find(':');
    if (colon == std::string::npos)
        return n;
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    std::string value = line.substr(colon + 1);
    const auto b = value.find_first_not_of(" \t");
    const auto e = value.find_last_not_of(" \t\r\n");
    t->response->headers[name] = b == std::string::npos ? std::string() : value.substr(b, e - b + 1);
    return n;
}

int onProgress(void *user, curl_off_t, curl_off_t, curl_off_t, curl_off_t)
{
    auto *t = static_cast<Transfer *>(user);
    return t->request->cancel && t->request->cancel->load() ? 1 : 0;
}

} // namespace

HttpResult httpPost(const HttpRequest &request)
{
    globalInit();
    HttpResult result;
    CURL *curl = curl_easy_init();
    if (!curl) {
        result.failure = TransportFailure::Other;
        result.error = "cannot start an HTTP transfer (curl_easy_init failed)";
        return result;
    }
    Transfer t{curl, &request, &result.response};
    curl_slist *headers = nullptr;
    for (const auto &[k, v] : request.headers)
        headers = curl_slist_append(headers, (k + ": " + v).c_str());
    headers = curl_slist_append(headers, "Expect:"); // no 100-continue round trip for large prompts
    char errbuf[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.size()));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, request.connectTimeoutMs);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, request.totalTimeoutMs);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L); // timeouts without SIGALRM: the search is threaded
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, onWrite);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, onProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, ""); // whatever curl can decode
    const CURLcode rc = curl_easy_perform(curl);
    if (!t.statusKnown)
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result.response.status);
    if (rc != CURLE_OK) {
        result.error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
        if (rc == CURLE_ABORTED_BY_CALLBACK || (request.cancel && request.cancel->load()))
            result.failure = TransportFailure::Cancelled;
        else if (rc == CURLE_OPERATION_TIMEDOUT)
            result.failure = TransportFailure::Timeout;
        else if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY)
            result.failure = TransportFailure::Connect;
        else if (rc == CURLE_WRITE_ERROR && t.callbackFailed)
            result.failure = TransportFailure::Other, result.error = "the reply stream could not be read";
        else
            result.failure = TransportFailure::Other;
    }
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    return result;
}

} // namespace kforge::llm

#pragma once
// Errors in core are values. A Status carries a message a user can act on; Expected<T> is a
// value or a Status. (std::expected is C++23; this is the subset we need.)

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace opscope {

enum class ErrorKind
{
    None,
    InvalidInput, // the user's file or arguments are wrong (CLI exit code 1)
    NotFound,     // a file or name that does not exist (exit code 1)
    Unsupported,  // valid input we cannot handle (exit code 1)
    Io,           // reading or writing failed (exit code 1)
    Internal,     // a bug in opscope (exit code 2)
};

class [[nodiscard]] Status
{
public:
    Status() = default;
    static Status ok() { return {}; }
    static Status error(ErrorKind kind, std::string message) { return Status(kind, std::move(message)); }
    static Status invalid(std::string message) { return error(ErrorKind::InvalidInput, std::move(message)); }
    static Status notFound(std::string message) { return error(ErrorKind::NotFound, std::move(message)); }
    static Status unsupported(std::string message)
    {
        return error(ErrorKind::Unsupported, std::move(message));
    }
    static Status io(std::string message) { return error(ErrorKind::Io, std::move(message)); }
    static Status internal(std::string message) { return error(ErrorKind::Internal, std::move(message)); }

    bool isOk() const { return m_kind == ErrorKind::None; }
    explicit operator bool() const { return isOk(); }
    ErrorKind kind() const { return m_kind; }
    const std::string &message() const { return m_message; }

    // Adds context in front: "loading model.onnx: <message>".
    Status withContext(const std::string &context) const
    {
        return isOk() ? *this : Status(m_kind, context + ": " + m_message);
    }

private:
    Status(ErrorKind kind, std::string message) : m_kind(kind), m_message(std::move(message)) {}
    ErrorKind m_kind = ErrorKind::None;
    std::string m_message;
};

template<class T>
class [[nodiscard]] Expected
{
public:
    Expected(T value) : m_data(std::move(value)) {}
    Expected(Status status) : m_data(std::move(status)) { assert(!std::get<Status>(m_data).isOk()); }

    bool hasValue() const { return m_data.index() == 0; }
    explicit operator bool() const { return hasValue(); }

    T &value() & { return std::get<T>(m_data); }
    const T &value() const & { return std::get<T>(m_data); }
    T &&value() && { return std::get<T>(std::move(m_data)); }
    T &operator*() & { return value(); }
    const T &operator*() const & { return value(); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }

    const Status &status() const
    {
        static const Status okStatus;
        return hasValue() ? okStatus : std::get<Status>(m_data);
    }

private:
    std::variant<T, Status> m_data;
};

} // namespace opscope

// Early return on error, for functions returning Status or Expected<...>.
#define OPSCOPE_TRY(expr)                                                                                    \
    do {                                                                                                     \
        ::opscope::Status _opscopeStatus = (expr);                                                           \
        if (!_opscopeStatus.isOk())                                                                          \
            return _opscopeStatus;                                                                           \
    } while (false)

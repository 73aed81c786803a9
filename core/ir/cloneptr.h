#pragma once
// An owning pointer with value semantics: copying it deep-copies the pointee. Used where a type
// contains itself (a graph attribute holds a graph, a sequence type holds a type), so snapshots
// of a graph never alias a subgraph that a later pass mutates.

#include <memory>

namespace opscope {

template<class T>
class ClonePtr
{
public:
    ClonePtr() = default;
    ClonePtr(std::unique_ptr<T> p) : m_ptr(std::move(p)) {}
    explicit ClonePtr(T value) : m_ptr(std::make_unique<T>(std::move(value))) {}
    ClonePtr(const ClonePtr &other) : m_ptr(other.m_ptr ? std::make_unique<T>(*other.m_ptr) : nullptr) {}
    ClonePtr(ClonePtr &&) noexcept = default;
    ClonePtr &operator=(const ClonePtr &other)
    {
        if (this != &other)
            m_ptr = other.m_ptr ? std::make_unique<T>(*other.m_ptr) : nullptr;
        return *this;
    }
    ClonePtr &operator=(ClonePtr &&) noexcept = default;

    T *get() const { return m_ptr.get(); }
    T &operator*() const { return *m_ptr; }
    T *operator->() const { return m_ptr.get(); }
    explicit operator bool() const { return static_cast<bool>(m_ptr); }

private:
    std::unique_ptr<T> m_ptr;
};

} // namespace opscope

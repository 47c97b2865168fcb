#pragma once
// A vector that keeps its first N elements inline: op inputs, outputs and
// attrs are almost always 1-3 long, and dispatch must not touch the heap.
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace kiln::detail {

template <class T, std::size_t N>
class SmallVector {
 public:
  SmallVector() = default;
  SmallVector(std::initializer_list<T> init) {
    reserve(init.size());
    for (const T& v : init) push_back(v);
  }
  explicit SmallVector(std::size_t n) { resize(n); }
  template <class It>
    requires(!std::is_integral_v<It>)
  SmallVector(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }
  SmallVector(const SmallVector& o) {
    reserve(o.size_);
    for (const T& v : o) push_back(v);
  }
  SmallVector(SmallVector&& o) noexcept { move_from(std::move(o)); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) {
      clear();
      reserve(o.size_);
      for (const T& v : o) push_back(v);
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      destroy_all();
      move_from(std::move(o));
    }
    return *this;
  }
  ~SmallVector() { destroy_all(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return ptr(); }
  const T* data() const { return ptr(); }
  T* begin() { return ptr(); }
  T* end() { return ptr() + size_; }
  const T* begin() const { return ptr(); }
  const T* end() const { return ptr() + size_; }
  T& operator[](std::size_t i) { return ptr()[i]; }
  const T& operator[](std::size_t i) const { return ptr()[i]; }
  T& back() { return ptr()[size_ - 1]; }
  T& front() { return ptr()[0]; }

  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    T* fresh = static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(alignof(T))));
    for (std::size_t i = 0; i < size_; ++i) {
      new (fresh + i) T(std::move(ptr()[i]));
      ptr()[i].~T();
    }
    release_heap();
    heap_ = fresh;
    capacity_ = n;
  }
  template <class... Args> T& emplace_back(Args&&... args) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    T* slot = new (ptr() + size_) T(std::forward<Args>(args)...);
    ++size_;
    return *slot;
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  void pop_back() { ptr()[--size_].~T(); }
  void resize(std::size_t n) {
    reserve(n);
    while (size_ < n) emplace_back();
    while (size_ > n) pop_back();
  }
  void clear() {
    for (std::size_t i = 0; i < size_; ++i) ptr()[i].~T();
    size_ = 0;
  }

 private:
  T* ptr() { return heap_ ? heap_ : reinterpret_cast<T*>(inline_); }
  const T* ptr() const { return heap_ ? heap_ : reinterpret_cast<const T*>(inline_); }
  void release_heap() {
    if (heap_) ::operator delete(heap_, std::align_val_t(alignof(T)));
    heap_ = nullptr;
  }
  void destroy_all() {
    clear();
    release_heap();
    capacity_ = N;
  }
  void move_from(SmallVector&& o) {
    if (o.heap_) {
      heap_ = o.heap_;
      size_ = o.size_;
      capacity_ = o.capacity_;
      o.heap_ = nullptr;
      o.size_ = 0;
      o.capacity_ = N;
    } else {
      heap_ = nullptr;
      capacity_ = N;
      size_ = 0;
      for (std::size_t i = 0; i < o.size_; ++i) emplace_back(std::move(o.ptr()[i]));
      o.clear();
    }
  }

  alignas(T) unsigned char inline_[N * sizeof(T)];
  T* heap_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = N;
};

}  // namespace kiln::detail

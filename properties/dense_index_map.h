#pragma once
// An ordered map from a small unsigned index (a page of a rank's pool, a rank) to T, for the
// page books every damage checker keeps. Indices below `dense_limit` live in a vector slot
// each: naming one costs no allocation once the slot exists, and a lookup is an index, where
// a std::map paid a tree node per page per run and a walk per event (docs/performance.md:
// the books were the largest part of a decision's cost that grew with the ranks). An index
// at or above the limit (a broken ledger naming a page far beyond its pool) goes to a
// std::map, so nothing is refused and memory stays bounded by what was named.
//
// It reads like the std::map it replaces, as far as the books use one (keys are named, never
// erased): operator[] names a key (value-initialised), find/at/end, iteration in ascending
// key order over named keys only, yielding (key, value&) pairs, so
// `for (const auto& [page, view] : pages)` reads as before.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

namespace kvsim::properties {

template <class Key, class T>
class dense_index_map {
  static_assert(std::is_unsigned_v<Key>, "keys are indices");

 public:
  static constexpr Key dense_limit = 4096;

  template <bool Const>
  class basic_iterator {
    using owner_type = std::conditional_t<Const, const dense_index_map, dense_index_map>;
    using map_iterator = std::conditional_t<Const, typename std::map<Key, T>::const_iterator,
                                            typename std::map<Key, T>::iterator>;

   public:
    using value_type = std::pair<Key, std::conditional_t<Const, const T&, T&>>;
    using reference = value_type;
    using difference_type = std::ptrdiff_t;
    using iterator_category = std::forward_iterator_tag;
    struct arrow {
      value_type pair;
      const value_type* operator->() const { return &pair; }
    };

    basic_iterator() = default;
    basic_iterator(owner_type* owner, std::size_t slot, map_iterator sparse)
        : owner_(owner), slot_(slot), sparse_(sparse) {
      skip_unnamed();
    }
    // A const iterator from a mutable one, as std::map allows.
    template <bool C = Const, class = std::enable_if_t<C>>
    basic_iterator(const basic_iterator<false>& other)  // NOLINT: implicit on purpose
        : owner_(other.owner_), slot_(other.slot_), sparse_(other.sparse_) {}

    value_type operator*() const {
      if (slot_ < owner_->slots_.size()) return value_type{static_cast<Key>(slot_), owner_->slots_[slot_]};
      return value_type{sparse_->first, sparse_->second};
    }
    arrow operator->() const { return arrow{**this}; }
    basic_iterator& operator++() {
      if (slot_ < owner_->slots_.size()) {
        ++slot_;
        skip_unnamed();
      } else {
        ++sparse_;
      }
      return *this;
    }
    basic_iterator operator++(int) {
      basic_iterator before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(const basic_iterator& a, const basic_iterator& b) {
      return a.slot_ == b.slot_ && a.sparse_ == b.sparse_;
    }

   private:
    friend class dense_index_map;
    friend class basic_iterator<!Const>;
    void skip_unnamed() {
      while (slot_ < owner_->slots_.size() && !owner_->named_[slot_]) ++slot_;
    }
    owner_type* owner_ = nullptr;
    std::size_t slot_ = 0;  // == slots_.size(): in the sparse part
    map_iterator sparse_{};
  };
  using iterator = basic_iterator<false>;
  using const_iterator = basic_iterator<true>;

  T& operator[](Key key) {
    if (key >= dense_limit) {
      auto [it, inserted] = sparse_.try_emplace(key);
      if (inserted) ++size_;
      return it->second;
    }
    if (key >= slots_.size()) {
      slots_.resize(static_cast<std::size_t>(key) + 1);
      named_.resize(slots_.size(), 0);
    }
    if (!named_[key]) {
      named_[key] = 1;
      ++size_;
    }
    return slots_[key];
  }

  iterator find(Key key) { return iterator_at(*this, key); }
  const_iterator find(Key key) const { return iterator_at(*this, key); }
  const T& at(Key key) const {
    const auto it = find(key);
    if (it == end()) throw std::out_of_range("dense_index_map::at: key never named");
    return (*it).second;
  }
  iterator begin() { return iterator(this, 0, sparse_.begin()); }
  iterator end() { return iterator(this, slots_.size(), sparse_.end()); }
  const_iterator begin() const { return const_iterator(this, 0, sparse_.begin()); }
  const_iterator end() const { return const_iterator(this, slots_.size(), sparse_.end()); }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

 private:
  template <class Self>
  static auto iterator_at(Self& self, Key key) {
    using It = std::conditional_t<std::is_const_v<Self>, const_iterator, iterator>;
    if (key >= dense_limit) return It(&self, self.slots_.size(), self.sparse_.find(key));
    if (key >= self.slots_.size() || !self.named_[key]) return It(&self, self.slots_.size(), self.sparse_.end());
    return It(&self, key, self.sparse_.begin());
  }

  std::vector<T> slots_;
  std::vector<std::uint8_t> named_;  // slots_[i] holds a named key
  std::map<Key, T> sparse_;          // keys >= dense_limit
  std::size_t size_ = 0;
};

}  // namespace kvsim::properties

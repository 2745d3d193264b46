#pragma once
// A phase space whose coordinates are split into items owned by the members of a group: one
// pseudo-extended chain over several ranks (issue 4, "Distribution: pseudo-sample blocks"), where
// item i is pseudo-sample i. Each member integrates only the coordinates of its own items; what
// the Hamiltonian needs across items (kinetic energy, the NUTS U-turn dot products) is formed as
// one partial sum per item and summed over the items in global index order (sum_items), so that
// the result is bit-identical on every member and for any group size, including 1.
//
// Layout: item i owns the block [i b, (i + 1) b) and, with a tail, coordinate n b + i (the
// pseudo-extended state (x_1, ..., x_N, eta_1, ..., eta_N)). A member owns the contiguous items
// [first, end), i.e. at most two contiguous coordinate ranges.
//
// A target whose potential is collective over such a partition implements PartitionedSpace; the
// Hamiltonian finds it there. Contract of such a target's potential_and_gradient: every member
// calls it with the same point, reads only its own items' coordinates, returns the full potential
// (identical bits on every member; +inf on every member when any member's gradient entry is not
// finite), writes the gradient of its own items and zeros elsewhere.
#include <array>
#include <span>
#include <type_traits>

#include "core/types.hpp"

namespace pemc::hmc {

class Partition {
 public:
  struct Layout {
    int n_items = 1;
    int block_dim = 1;
    bool tail = false;
  };
  struct Range {
    Eigen::Index begin = 0;
    Eigen::Index size = 0;
  };

  // This member of a group of group_size owns items [first, end) (first == end: none).
  Partition(Layout layout, int first, int end, int group_size)
      : layout_(layout), first_(first), end_(end), group_size_(group_size) {
    const Eigen::Index b = layout_.block_dim;
    ranges_[0] = {first_ * b, (end_ - first_) * b};
    n_ranges_ = 1;
    if (layout_.tail) ranges_[n_ranges_++] = {tail_index(first_), end_ - first_};
  }
  virtual ~Partition() = default;

  const Layout& layout() const { return layout_; }
  int n_items() const { return layout_.n_items; }
  int block_dim() const { return layout_.block_dim; }
  bool has_tail() const { return layout_.tail; }
  Eigen::Index dim() const {
    const Eigen::Index per_item = layout_.block_dim + (layout_.tail ? 1 : 0);
    return static_cast<Eigen::Index>(layout_.n_items) * per_item;
  }
  int first_item() const { return first_; }
  int end_item() const { return end_; }
  int n_local() const { return end_ - first_; }
  Eigen::Index block_begin(int item) const {
    return static_cast<Eigen::Index>(item) * layout_.block_dim;
  }
  Eigen::Index tail_index(int item) const {
    return static_cast<Eigen::Index>(layout_.n_items) * layout_.block_dim + item;
  }
  // This member's coordinates (empty ranges when it owns no item).
  std::span<const Range> local_ranges() const { return {ranges_.data(), n_ranges_}; }

  // a . b over item i's coordinates, in a fixed order (four interleaved partial sums over the
  // block, combined as (s0 + s1) + (s2 + s3), then the tail): the same bits whichever member owns
  // item i and wherever its coordinates sit in memory. a and b may be expressions.
  // (Always inlined: called per item, several times per leapfrog step, with tiny blocks.)
  // Bd: the block dimension if known at compile time (with_block_dim), else Eigen::Dynamic; the
  // same arithmetic either way (a known size only unrolls the loops).
  template <int Bd = Eigen::Dynamic, class A, class B>
  [[gnu::always_inline]] double item_dot(int item, const Eigen::MatrixBase<A>& a,
                                         const Eigen::MatrixBase<B>& b) const {
    const auto& x = a.derived();
    const auto& y = b.derived();
    const Eigen::Index s = block_begin(item), n = Bd != Eigen::Dynamic ? Bd : layout_.block_dim;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    Eigen::Index j = s;
    for (; j + 4 <= s + n; j += 4) {
      s0 += x.coeff(j) * y.coeff(j);
      s1 += x.coeff(j + 1) * y.coeff(j + 1);
      s2 += x.coeff(j + 2) * y.coeff(j + 2);
      s3 += x.coeff(j + 3) * y.coeff(j + 3);
    }
    for (; j < s + n; ++j) s0 += x.coeff(j) * y.coeff(j);
    double r = (s0 + s1) + (s2 + s3);
    if (layout_.tail) {
      const Eigen::Index t = tail_index(item);
      r += x.coeff(t) * y.coeff(t);
    }
    return r;
  }

  // a1 . b and a2 . b over item i's coordinates in one pass, each with item_dot's arithmetic.
  template <int Bd = Eigen::Dynamic, class A1, class A2, class B>
  [[gnu::always_inline]] void item_dots(int item, const Eigen::MatrixBase<A1>& a1,
                                        const Eigen::MatrixBase<A2>& a2,
                                        const Eigen::MatrixBase<B>& b, double& r1,
                                        double& r2) const {
    const auto& x1 = a1.derived();
    const auto& x2 = a2.derived();
    const auto& y = b.derived();
    const Eigen::Index s = block_begin(item), n = Bd != Eigen::Dynamic ? Bd : layout_.block_dim;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
    Eigen::Index j = s;
    for (; j + 4 <= s + n; j += 4) {
      const double y0 = y.coeff(j), y1 = y.coeff(j + 1), y2 = y.coeff(j + 2), y3 = y.coeff(j + 3);
      s0 += x1.coeff(j) * y0;
      s1 += x1.coeff(j + 1) * y1;
      s2 += x1.coeff(j + 2) * y2;
      s3 += x1.coeff(j + 3) * y3;
      t0 += x2.coeff(j) * y0;
      t1 += x2.coeff(j + 1) * y1;
      t2 += x2.coeff(j + 2) * y2;
      t3 += x2.coeff(j + 3) * y3;
    }
    for (; j < s + n; ++j) {
      const double yj = y.coeff(j);
      s0 += x1.coeff(j) * yj;
      t0 += x2.coeff(j) * yj;
    }
    r1 = (s0 + s1) + (s2 + s3);
    r2 = (t0 + t1) + (t2 + t3);
    if (layout_.tail) {
      const Eigen::Index t = tail_index(item);
      const double yt = y.coeff(t);
      r1 += x1.coeff(t) * yt;
      r2 += x2.coeff(t) * yt;
    }
  }

  // f(std::integral_constant<int, B>{}) with B = the block dimension when it is 1-4 (small
  // pseudo-samples: the per-item loops of item_dot<B> then unroll), else B = Eigen::Dynamic.
  template <class F>
  [[gnu::always_inline]] decltype(auto) with_block_dim(F&& f) const {
    switch (layout_.block_dim) {
      case 1: return f(std::integral_constant<int, 1>{});
      case 2: return f(std::integral_constant<int, 2>{});
      case 3: return f(std::integral_constant<int, 3>{});
      case 4: return f(std::integral_constant<int, 4>{});
      default: return f(std::integral_constant<int, Eigen::Dynamic>{});
    }
  }

  // Zeros the coordinates of v that belong to other members' items.
  void zero_nonlocal(VectorRef v) const {
    const Eigen::Index b = layout_.block_dim, n = layout_.n_items;
    v.head(first_ * b).setZero();
    v.segment(end_ * b, (n - end_) * b).setZero();
    if (layout_.tail) {
      v.segment(n * b, first_).setZero();
      v.segment(n * b + end_, n - end_).setZero();
    }
  }

  int group_size() const { return group_size_; }
  // Collective (with several members). `local` holds m values per local item (item-major, items
  // first..end-1); every member receives in sums[j] the sum over ALL items i = 0, 1, ..., n-1 (in
  // this order) of value j. Bit-identical on every member and for any group size.
  void sum_items(std::span<const double> local, int m, std::span<double> sums) const {
    const double* all = group_size_ > 1 ? allgather_items(local, m) : local.data();
    const std::size_t mm = static_cast<std::size_t>(m);
    for (std::size_t j = 0; j < mm; ++j) sums[j] = 0.0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(layout_.n_items); ++i)
      for (std::size_t j = 0; j < mm; ++j) sums[j] += all[i * mm + j];
  }
  // Collective. Fills the coordinates of v that belong to other members' items with their owners'
  // values (every member ends with the owners' full vector).
  virtual void gather(VectorRef v) const = 0;

 protected:
  // Collective (called with several members only): every member's m values per local item ->
  // all n m values in item order, in storage the partition owns (valid until the next call).
  virtual const double* allgather_items(std::span<const double> local, int m) const = 0;

 private:
  Layout layout_;
  int first_ = 0, end_ = 0, group_size_ = 1;
  std::array<Range, 2> ranges_{};
  std::size_t n_ranges_ = 0;
};

// A target (space) whose potential is collective over a partition (see the contract above).
class PartitionedSpace {
 public:
  virtual ~PartitionedSpace() = default;
  virtual const Partition& partition() const = 0;
};

}  // namespace pemc::hmc

#pragma once
// A constant tensor's values, for the inspector's Values tab (Netron and a debugger's array view
// show them; statistics alone hide a wrong Reshape target or a zero scale): small tensors in full,
// nested by shape; big ones as a 2-D slice through any two axes with the others fixed.

#include "ir/graph.h"
#include "ir/tensor.h"
#include "util/status.h"

#include <optional>
#include <string>
#include <vector>

namespace opscope {

// The constant tensors a node reads (initializers, and the values of Constant nodes feeding it),
// named after the value; a Constant node's own value. What the Values tab offers for a selection.
std::vector<Tensor> constantInputs(const Graph &graph, NodeId node);
// The constant behind a value (an initializer, or a Constant node's output), or nullopt.
std::optional<Tensor> constantValue(const Graph &graph, ValueId value);

// One element as text: integers exactly (int64 too), floats with 6 significant digits, bools as
// true/false, strings quoted. `flat` is the row-major index.
std::string elementText(const Tensor &tensor, std::int64_t flat);

// Every value nested by shape ("[[1, 2, 3], [4, 5, 6]]", a scalar as "3.5") when the tensor has at
// most `limit` elements; nullopt otherwise, or for a tensor without data.
std::optional<std::string> allValuesText(const Tensor &tensor, std::int64_t limit = 256);

// Rows along `rowAxis`, columns along `colAxis` (-1: a single column), every other axis at its
// index in `fixed` (one entry per axis; the row and column entries are ignored).
class TensorSlice
{
public:
    static Expected<TensorSlice> make(const Tensor &tensor, int rowAxis, int colAxis,
                                      std::vector<std::int64_t> fixed);
    std::int64_t rows() const { return m_rows; }
    std::int64_t cols() const { return m_cols; }
    std::int64_t flatIndex(std::int64_t row, std::int64_t col) const;
    std::string text(std::int64_t row, std::int64_t col) const { return elementText(m_tensor, flatIndex(row, col)); }

private:
    Tensor m_tensor; // shares the bytes
    std::int64_t m_rows = 1, m_cols = 1, m_base = 0, m_rowStride = 0, m_colStride = 0;
};

} // namespace opscope

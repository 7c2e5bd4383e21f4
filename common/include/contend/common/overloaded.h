#pragma once
// Overloaded{...}: one visitor from several lambdas, for std::visit over a closed set of kinds
// (std::variant). A kind no lambda takes fails to compile, so every reader handles every kind.

namespace contend {

template <typename... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <typename... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace contend

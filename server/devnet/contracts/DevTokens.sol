// SPDX-License-Identifier: MIT
// The devnet's tokens (issue 4): one of each kind the on-chain tools must recognise.
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Pausable} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Pausable.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ERC1967Proxy} from "@openzeppelin/contracts/proxy/ERC1967/ERC1967Proxy.sol";
import {ERC20Upgradeable} from "@openzeppelin/contracts-upgradeable/token/ERC20/ERC20Upgradeable.sol";
import {Initializable} from "@openzeppelin/contracts-upgradeable/proxy/utils/Initializable.sol";

/// A plain fixed-supply ERC-20 with 18 decimals.
contract DevPlainToken is ERC20 {
    constructor(string memory name_, string memory symbol_, uint256 supply, address holder) ERC20(name_, symbol_) {
        _mint(holder, supply);
    }
}

/// A fixed-supply ERC-20 with 6 decimals, like USDC.
contract DevSixDecimalsToken is ERC20 {
    constructor(string memory name_, string memory symbol_, uint256 supply, address holder) ERC20(name_, symbol_) {
        _mint(holder, supply);
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }
}

/// An ERC-20 whose owner can mint and pause transfers.
contract DevManagedToken is ERC20, ERC20Pausable, Ownable {
    constructor(string memory name_, string memory symbol_, address owner_) ERC20(name_, symbol_) Ownable(owner_) {}

    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }

    function pause() external onlyOwner {
        _pause();
    }

    function unpause() external onlyOwner {
        _unpause();
    }

    function _update(address from, address to, uint256 value) internal override(ERC20, ERC20Pausable) {
        super._update(from, to, value);
    }
}

/// The implementation behind an EIP-1967 proxy (initialised through the proxy).
contract DevUpgradeableToken is Initializable, ERC20Upgradeable {
    constructor() {
        _disableInitializers();
    }

    function initialize(string memory name_, string memory symbol_, uint256 supply, address holder) external initializer {
        __ERC20_init(name_, symbol_);
        _mint(holder, supply);
    }
}

/// OpenZeppelin's EIP-1967 proxy, compiled here so the devnet can deploy it.
contract DevProxy is ERC1967Proxy {
    constructor(address implementation, bytes memory data) ERC1967Proxy(implementation, data) {}
}

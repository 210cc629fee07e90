// Package handcontrol dissects the HandControl prosthesis link.
package handcontrol
